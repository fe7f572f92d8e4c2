// Generates openapi.json from the route schemas (`write`) or fails when the committed file
// differs from what the code would generate (`check`, run by CI).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/app/context.js';
import { buildApp } from '../src/app/http.js';

const target = path.resolve(import.meta.dirname, '..', 'openapi.json');

async function generate(): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-openapi-'));
  const config = loadConfig({ VERDICT_DATA_DIR: dataDir }, { database: { kind: 'sqlite', file: ':memory:' } });
  const ctx = await createContext(config, pino({ level: 'silent' }));
  try {
    const app = await buildApp(ctx);
    const document = JSON.stringify(app.swagger(), null, 2) + '\n';
    await app.close();
    return document;
  } finally {
    await ctx.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
const generated = await generate();
if (mode === 'write') {
  fs.writeFileSync(target, generated);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
} else if (mode === 'check') {
  const committed = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
  if (committed !== generated) {
    console.error('openapi.json is out of date with the route schemas: run `npm run openapi:write` and commit it.');
    process.exit(1);
  }
  console.log('openapi.json matches the code');
} else {
  console.error('usage: tsx scripts/openapi.ts write|check');
  process.exit(2);
}

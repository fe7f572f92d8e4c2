// Builds the admin UI into web/dist. `npm install` runs it (the "prepare" script), so a fresh
// clone serves the UI after `npm install && npm start`; `npm run build:web` runs it by hand.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

let vite;
try {
  vite = await import('vite');
} catch {
  // A production-only install has no Vite: the server then answers /ui with a page saying so.
  console.warn('[verdict] vite is not installed, so the admin UI was not built (/ui will say so).');
  process.exit(0);
}

await vite.build({ configFile: path.join(here, 'vite.config.mjs') });

const assets = path.join(here, 'dist', 'assets');
const sizes = fs.readdirSync(assets).map((name) => `${name} ${(fs.statSync(path.join(assets, name)).size / 1024).toFixed(1)} kB`);
console.log(`[verdict] admin UI built into web/dist: ${sizes.join(', ')}`);

import type { Command } from 'commander';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../config.js';

const DESCRIPTION =
  'Re-encrypt every stored webhook secret under a new, random secret key, in one transaction (audit-logged as secret_key.rotated). ' +
  'Stop every Verdict process first. With VERDICT_SECRET_KEY set it prints the new key: set it on every process, then start them. ' +
  'Without it, it replaces <data dir>/secret.key.';

/** The current key's box; refuses to create a key file (a missing file means the wrong data dir). */
async function currentBox(config: Config) {
  const { loadSecretBox } = await import('../lib/secrets.js');
  const keyFile = path.join(config.dataDir, 'secret.key');
  if (!config.secretKey && !fs.existsSync(keyFile)) {
    throw new Error(`no secret key: VERDICT_SECRET_KEY is not set and ${keyFile} does not exist; run with the servers' environment`);
  }
  return loadSecretBox(config.secretKey, config.dataDir);
}

export function registerSecrets(program: Command): void {
  const secrets = program.command('secrets').description('The secret key that encrypts stored webhook secrets.');
  secrets
    .command('rotate')
    .description(DESCRIPTION)
    .action(async () => {
      const config = loadConfig();
      const { migrateAndWarnIfNew, requireExistingDatabase } = await import('./database-check.js');
      requireExistingDatabase(config);
      await migrateAndWarnIfNew(config);
      const { SecretBox } = await import('../lib/secrets.js');
      const { openDatabase } = await import('../db/database.js');
      const { resealAllSecrets } = await import('../features/secret-key/reseal.js');
      const current = await currentBox(config);
      const newKey = crypto.randomBytes(32).toString('hex');
      const keyFile = path.join(config.dataDir, 'secret.key');
      const nextFile = `${keyFile}.next`;
      // The new key file is written before the commit and moved into place after it: if the run
      // stops in between, secret.key.next holds the key the database now uses.
      if (!config.secretKey) fs.writeFileSync(nextFile, newKey + '\n', { mode: 0o600, flag: 'wx' });
      const handle = openDatabase(config.database);
      try {
        const done = await resealAllSecrets(handle.db, current, new SecretBox(Buffer.from(newKey, 'hex')), Date.now());
        process.stderr.write(`verdict: re-encrypted ${done.secrets} secrets of ${done.workspaces} workspaces\n`);
      } catch (error) {
        if (!config.secretKey) fs.rmSync(nextFile, { force: true });
        throw error;
      } finally {
        await handle.destroy();
      }
      if (config.secretKey) {
        process.stdout.write(newKey + '\n');
        process.stderr.write('verdict: set VERDICT_SECRET_KEY to the key above (stdout) on every process, then start them\n');
      } else {
        fs.renameSync(nextFile, keyFile);
        process.stderr.write(`verdict: ${keyFile} now holds the new key; start the server\n`);
      }
    });
}

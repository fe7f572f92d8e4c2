import fs from 'node:fs';
import path from 'node:path';
import type { Config, DatabaseConfig } from '../config.js';
import type { MigrationReport } from '../db/database.js';

/** The migration that only an empty database still lacks. */
const FIRST_MIGRATION = '0001_foundation';

/** Where the database lives, for a message: the SQLite path, or the PostgreSQL URL without its credentials. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.kind === 'sqlite') return database.file;
  try {
    const url = new URL(database.url);
    url.username = '';
    url.password = '';
    url.search = '';
    return url.toString();
  } catch {
    return 'the PostgreSQL database of VERDICT_DATABASE_URL';
  }
}

function configurationHint(config: Config): string {
  // The SQLite file named by VERDICT_DATABASE_URL=sqlite:… lies wherever that URL says.
  const inDataDir = config.database.kind === 'sqlite' && config.database.file === path.join(config.dataDir, 'verdict.sqlite');
  return inDataDir ? `VERDICT_DATA_DIR=${config.dataDir}` : 'from VERDICT_DATABASE_URL';
}

/**
 * Migrates the database a one-shot command is about to use and says on stderr when it was empty
 * (a new SQLite file, or a PostgreSQL schema without Verdict's tables). Run with another
 * VERDICT_DATA_DIR than the server, the bootstrap would otherwise write its workspace and key
 * into a database no server reads, and the printed key would answer 401.
 */
export async function migrateAndWarnIfNew(config: Config): Promise<MigrationReport> {
  const [{ migrateDatabase }, { existingSecretBox }] = await Promise.all([import('../db/database.js'), import('../lib/secrets.js')]);
  // The secret key seals what a migration moves into sealed columns (webhook endpoint URLs); a
  // one-shot command never makes a key file (`secrets rotate` refuses to run without one).
  const report = await migrateDatabase(config.database, existingSecretBox(config.secretKey, config.dataDir));
  if (report.applied.includes(FIRST_MIGRATION)) {
    const what = config.database.kind === 'sqlite' ? 'created a new database file' : 'created the Verdict tables in an empty database';
    process.stderr.write(
      `verdict: warning: ${what} at ${describeDatabase(config.database)} (${configurationHint(config)}). ` +
        'A server started with another VERDICT_DATA_DIR or VERDICT_DATABASE_URL does not see what this command writes: ' +
        'run it with the same environment as `verdict serve`.\n',
    );
  }
  return report;
}

/**
 * For commands that only read what is there (`verdict analyze`): a missing SQLite file is a wrong
 * VERDICT_DATA_DIR, not a database to create, so fail before opening (which would create it).
 */
export function requireExistingDatabase(config: Config): void {
  const database = config.database;
  if (database.kind !== 'sqlite' || database.file === ':memory:' || fs.existsSync(database.file)) return;
  throw new Error(
    `no database at ${database.file} (${configurationHint(config)}): ` +
      'run this command with the same VERDICT_DATA_DIR / VERDICT_DATABASE_URL as `verdict serve`',
  );
}

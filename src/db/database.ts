import { Kysely, Migrator, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { postgresSeam, sqliteSeam, type DialectSeam } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import { inlineReads, postgresReads, SqliteThreadReads, type ReadPool } from './read-pool.js';
import type { Database } from './schema.js';
import { sqliteDialect } from './sqlite.js';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Either the database or an open transaction: store functions accept both. */
export type Executor = Db | Tx;

export interface DatabaseHandle {
  db: Db;
  seam: DialectSeam;
  /** Where long analytical reads run (see read-pool.ts). */
  reads: ReadPool;
  destroy(): Promise<void>;
}

export interface AnalyticalReadOptions {
  /** SQLite: worker threads for analytical reads; 0 runs them on the main connection. */
  threads: number;
  /** PostgreSQL: work_mem for analytical reads. */
  workMem: string;
}

// int8 (count(*), epoch-millisecond columns) arrives as a string by default; our values fit
// comfortably in a double, so read them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function openDatabase(config: DatabaseConfig, analytical: AnalyticalReadOptions = { threads: 0, workMem: '64MB' }): DatabaseHandle {
  if (config.kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: config.url, max: 20, idleTimeoutMillis: 30_000 });
    // A dropped connection emits 'error' on an idle client; without a listener it would crash
    // the process. The pool replaces the client on next use, which is how we reconnect.
    pool.on('error', () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, seam: postgresSeam, reads: postgresReads(db, analytical.workMem), destroy: () => db.destroy() };
  }
  const db = new Kysely<Database>({ dialect: sqliteDialect(config.file) });
  const threaded = analytical.threads > 0 && config.file !== ':memory:';
  const reads = threaded ? new SqliteThreadReads(config.file, analytical.threads) : inlineReads(db);
  return {
    db,
    seam: sqliteSeam,
    reads,
    async destroy() {
      await reads.close();
      await db.destroy();
    },
  };
}

export interface MigrationReport {
  applied: string[];
}

/** Opens the database only to migrate it, then closes it (`verdict migrate`, the primary of `serve --processes`). */
export async function migrateDatabase(config: DatabaseConfig): Promise<MigrationReport> {
  const handle = openDatabase(config);
  try {
    return await migrateToLatest(handle.db);
  } finally {
    await handle.destroy();
  }
}

export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

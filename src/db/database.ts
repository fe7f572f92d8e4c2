import { Kysely, Migrator, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config.js';
import type { SecretBox } from '../lib/secrets.js';
import { postgresSeam, sqliteSeam, type DialectSeam } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import { inlineReads, postgresReads, SqliteThreadReads, type ReadPool } from './read-pool.js';
import type { Database } from './schema.js';
import { kyselySideReads, sqliteSideReads, type SideReads } from './side-reads.js';
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
  /** Hot-path single-row reads off the API's own SQLite connection (see side-reads.ts). */
  sideReads: SideReads;
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

/** Called when PostgreSQL drops a pooled connection (a restart, a failover, a network cut). */
export type ConnectionLossListener = (error: Error) => void;

export function openDatabase(
  config: DatabaseConfig,
  analytical: AnalyticalReadOptions = { threads: 0, workMem: '64MB' },
  onConnectionLoss: ConnectionLossListener = () => undefined,
): DatabaseHandle {
  if (config.kind === 'postgres') {
    const pool = postgresPool(config.url, onConnectionLoss);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, seam: postgresSeam, reads: postgresReads(db, analytical.workMem), sideReads: kyselySideReads(db), destroy: () => db.destroy() };
  }
  const db = new Kysely<Database>({ dialect: sqliteDialect(config.file) });
  const threaded = analytical.threads > 0 && config.file !== ':memory:';
  const reads = threaded ? new SqliteThreadReads(config.file, analytical.threads) : inlineReads(db);
  const sideReads = config.file === ':memory:' ? kyselySideReads(db) : sqliteSideReads(config.file);
  return {
    db,
    seam: sqliteSeam,
    reads,
    sideReads,
    async destroy() {
      await sideReads.close();
      await reads.close();
      await db.destroy();
    },
  };
}

/**
 * A pool whose clients survive the server going away. A dropped connection emits 'error' on
 * its client: the pool listens on idle clients, but a client checked out (a query in flight,
 * an open transaction) has no listener of the pool's, and an 'error' event without a listener
 * ends the process. So every client gets its own listener as it connects; the query in flight
 * fails with a connection error instead, the broken client is discarded when it is released
 * (pg-pool drops clients that are no longer queryable), and the next query opens a new one.
 */
function postgresPool(url: string, onConnectionLoss: ConnectionLossListener): pg.Pool {
  // A server that does not answer at all (a host gone, a network cut) fails the query after
  // 10 s instead of holding the request until the socket times out.
  const pool = new pg.Pool({ connectionString: url, max: 20, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 });
  pool.on('connect', (client) => client.on('error', onConnectionLoss));
  // The pool re-emits an idle client's error, which the client's own listener has reported.
  pool.on('error', () => undefined);
  return pool;
}

/** Warns of lost connections at most once per `quietMs`: a restart drops every pooled client at once. */
export function warnOfConnectionLoss(logger: Logger, quietMs = 10_000): ConnectionLossListener {
  let lastWarnedAt = -Infinity;
  return (error) => {
    const now = Date.now();
    if (now - lastWarnedAt < quietMs) return;
    lastWarnedAt = now;
    logger.warn({ err: error }, 'lost a connection to PostgreSQL; queries in flight on it failed, new ones reconnect');
  };
}

export interface MigrationReport {
  applied: string[];
}

/** Opens the database only to migrate it, then closes it (`verdict migrate`, the primary of `serve --processes`). */
export async function migrateDatabase(config: DatabaseConfig, secrets: SecretBox | null = null): Promise<MigrationReport> {
  const handle = openDatabase(config);
  try {
    return await migrateToLatest(handle.db, secrets);
  } finally {
    await handle.destroy();
  }
}

/** `secrets` seals what a migration moves into sealed columns; a database with nothing to seal needs none. */
export async function migrateToLatest(db: Db, secrets: SecretBox | null = null): Promise<MigrationReport> {
  // Numbers are reserved per change and land in any order (0023 may ship before 0020): a database
  // that has later ones applies an earlier newcomer too, instead of refusing to start.
  const migrator = new Migrator({ db, provider: migrationProvider(secrets), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}

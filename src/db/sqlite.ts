import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type QueryResult } from 'kysely';

/** How long a statement waits for another process's write lock before SQLITE_BUSY reaches the caller. */
const BUSY_WAIT_MS = 10_000;

/**
 * BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads and then writes
 * cannot fail with SQLITE_BUSY half-way when another process (a `verdict worker`, a sibling of
 * `serve --processes N`) holds the lock; it waits for the lock instead (see PatientConnection).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turns = new FifoMutex();
  #patient: PatientConnection | undefined;

  // Kysely's own mutex wakes every waiter on each release and all but one wait again, so with
  // 64 requests queued on the one connection each query cost 63 wasted wake-ups. Queueing
  // here first hands the connection to the next waiter only; the base mutex is then always free.
  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turns.lock();
    const connection = await super.acquireConnection();
    this.#patient ??= new PatientConnection(connection);
    return this.#patient;
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.#turns.unlock();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Waits for another process's write lock without blocking the event loop. SQLite's own busy
 * handler sleeps inside the call, which would stall every request of this process (cached
 * assignment hits included) for as long as a sibling process commits; the connection runs with
 * busy_timeout 0 instead and a statement that met the lock (SQLITE_BUSY means it did nothing)
 * is tried again after a short timer, for up to BUSY_WAIT_MS.
 */
class PatientConnection implements DatabaseConnection {
  constructor(private readonly inner: DatabaseConnection) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return this.inner.executeQuery<R>(query);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return this.#retry<R>(query, performance.now() + BUSY_WAIT_MS);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  async #retry<R>(query: CompiledQuery, deadline: number): Promise<QueryResult<R>> {
    for (;;) {
      // Every millisecond or so: a commit holds the lock for about that long, and a growing delay
      // lets a busy sibling take the lock again and again first. Jitter keeps waiters out of step.
      await new Promise((resolve) => setTimeout(resolve, 0.5 + Math.random()));
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (error) {
        if (!isBusy(error) || performance.now() > deadline) throw error;
      }
    }
  }
}

/** SQLITE_BUSY: the statement met another connection's lock and did nothing. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** A lock that passes straight to the longest waiter on release (first come, first served). */
export class FifoMutex {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  lock(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  unlock(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: () => Promise<BetterSqlite3.Database>;
  constructor(database: () => Promise<BetterSqlite3.Database>) {
    super({ database });
    this.#database = database;
  }
  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver({ database: this.#database });
  }
}

/** Kysely prepares every query anew; caching statements keeps hot paths (assign, auth) cheap. */
function withStatementCache(db: BetterSqlite3.Database): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = db.prepare.bind(db);
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property !== 'prepare') return Reflect.get(target, property, receiver);
      return (sql: string) => {
        let statement = cache.get(sql);
        if (!statement) {
          statement = prepare(sql);
          if (cache.size > 500) cache.clear();
          cache.set(sql, statement);
        }
        return statement;
      };
    },
  });
}

/** What a WAL file is cut back to once it restarts (journal_size_limit). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function openSqlite(file: string): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  // FULL syncs the WAL on every commit: an acknowledged write survives a power cut, not only a crash.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // A WAL only grows while readers keep a checkpoint from finishing (a long analysis under
  // sustained writes), and SQLite keeps the file at its largest afterwards to reuse it. With a
  // limit, the first commit after the WAL restarts cuts the file back, so a peak's disk space
  // (952 MB in an hour's soak) comes back; 64 MB is far more than a quiet process's WAL needs.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  return db;
}

export function sqliteDialect(file: string): SqliteDialect {
  return sqliteDialectOn(() => openSqlite(file));
}

/**
 * The dialect over a connection the caller opens (and may also use directly, for statements
 * prepared once: see buffer/prepared-append.ts). Statements of both go through one connection,
 * so the caller's own statements must run where Kysely holds the connection (a transaction).
 */
export function sqliteDialectOn(open: () => BetterSqlite3.Database): SqliteDialect {
  return new ImmediateSqliteDialect(async () => {
    const db = open();
    // PatientConnection waits for the lock on a timer instead of SQLite sleeping in the call.
    db.pragma('busy_timeout = 0');
    return withStatementCache(db);
  });
}

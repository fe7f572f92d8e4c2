import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection } from 'kysely';

/**
 * BEGIN IMMEDIATE takes the write lock up front, so a transaction that reads and then writes
 * cannot fail with SQLITE_BUSY half-way when another process (a `verdict worker`) holds the lock;
 * it waits on busy_timeout instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #turns = new FifoMutex();

  // Kysely's own mutex wakes every waiter on each release and all but one wait again, so with
  // 64 requests queued on the one connection each query cost 63 wasted wake-ups. Queueing
  // here first hands the connection to the next waiter only; the base mutex is then always free.
  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.#turns.lock();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.#turns.unlock();
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
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

export function openSqlite(file: string): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  // FULL syncs the WAL on every commit: an acknowledged write survives a power cut, not only a crash.
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  return db;
}

export function sqliteDialect(file: string): SqliteDialect {
  return new ImmediateSqliteDialect(async () => withStatementCache(openSqlite(file)));
}

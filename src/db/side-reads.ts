import BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import { isBusy, withStatementCache } from './sqlite.js';

/**
 * Single-row reads on a hot path that must not queue behind the API's own SQLite connection.
 * Kysely hands that one connection to one caller at a time, and a transaction holds it across
 * event-loop turns (an admin mutation, an exposure logged), so a sticky-cache miss read there
 * waits for all of it. SQLite: a second connection of the process, used for reads only (in WAL
 * mode a reader never waits for a writer); PostgreSQL: the pool, which has many connections.
 */
export interface SideReads {
  /** The first row of a compiled read, or undefined. */
  first<R>(query: CompiledQuery<R>): Promise<R | undefined>;
  close(): void;
}

/** Reads through Kysely itself: PostgreSQL's pool, or an in-memory SQLite (a second connection would open another database). */
export function kyselySideReads(db: Db): SideReads {
  return {
    first: async <R>(query: CompiledQuery<R>) => (await db.executeQuery(query)).rows[0],
    close: () => undefined,
  };
}

/**
 * A read-only connection on the SQLite file, opened at first use (after the migrations), its
 * statements cached as the API connection's are (withStatementCache).
 * busy_timeout stays 0: a reader meets SQLITE_BUSY only in rare moments (a WAL reset), and then
 * the read goes through the main connection instead of SQLite sleeping on the event loop.
 */
export function sqliteSideReads(file: string, db: Db): SideReads {
  let connection: BetterSqlite3.Database | undefined;
  const fallback = kyselySideReads(db);
  const statement = (sql: string) => {
    connection ??= withStatementCache(new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 0 }));
    return connection.prepare(sql);
  };
  return {
    first<R>(query: CompiledQuery<R>): Promise<R | undefined> {
      try {
        return Promise.resolve(statement(query.sql).get(...(query.parameters as unknown[])) as R | undefined);
      } catch (error) {
        if (!isBusy(error)) return Promise.reject(error as Error);
        return fallback.first(query);
      }
    },
    close() {
      connection?.close();
      connection = undefined;
    },
  };
}

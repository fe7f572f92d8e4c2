import { BufferUnavailableError } from '../buffer/errors.js';
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { SOCKET_ERROR_CODES } from '../lib/socket-errors.js';
import type { Executor } from './database.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * The one place that knows which database is running. Services call these helpers and never
 * branch on the dialect themselves.
 */
export interface DialectSeam {
  readonly name: DialectName;
  /** True when the error is a violated unique or primary-key constraint. */
  isUniqueViolation(error: unknown): boolean;
  /** Lets concurrent claimers skip rows another transaction holds (no-op where writes serialize). */
  skipLocked<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** Locks the selected rows until the transaction ends (no-op where a transaction already excludes writers). */
  forUpdate<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /**
   * Waits until no other transaction holds the lock `name`, then holds it until this one ends, so
   * the transactions that take it run one after another, across processes (a transaction-level
   * advisory lock; no-op where a transaction already excludes writers).
   */
  lockUntilCommit(trx: Executor, name: string): Promise<void>;
  /** True when the error means the database could not be reached. */
  isConnectionError(error: unknown): boolean;
  /**
   * True when the database cannot serve the query now but may shortly, so the caller should
   * answer 503 and retry: it cannot be reached, or (SQLite) another process held the write lock
   * past the wait.
   */
  isUnavailable(error: unknown): boolean;
  /**
   * The JSON number at `keys` inside the JSON text in `column` (a trusted column reference), or
   * NULL when the path is missing or holds anything but a number (strings, booleans, objects).
   */
  jsonNumberAt(column: string, keys: readonly string[]): RawBuilder<number | null>;
  /** The JSON text at top-level `key` inside the JSON text in `column` (a trusted column reference), as text, or NULL. */
  jsonTextAt(column: string, key: string): RawBuilder<string | null>;
  /** `expression` compared in code-point order (byte order of UTF-8), whatever the database's default collation. */
  inCodePointOrder(expression: RawBuilder<unknown>): RawBuilder<unknown>;
  /**
   * `expression` with A-Z lowered and every other character kept: the same text on every database
   * (PostgreSQL's lower() follows its locale, SQLite's folds ASCII only), and in code.
   */
  asciiLowerCase(expression: RawBuilder<unknown>): RawBuilder<string>;
}

/** SQLite JSON path of object keys: each key quoted, with `"` and `\\` escaped, so any key is safe. */
export function sqliteJsonPath(keys: readonly string[]): string {
  return '$' + keys.map((key) => `."${key.replace(/[\\"]/g, (char) => `\\${char}`)}"`).join('');
}

function errorCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

export const sqliteSeam: DialectSeam = {
  name: 'sqlite',
  isUniqueViolation: (error) => {
    const code = errorCode(error);
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  // SQLite has one writer at a time and claims run inside BEGIN IMMEDIATE, so nothing to skip.
  skipLocked: (query) => query,
  // Every SQLite transaction here starts with BEGIN IMMEDIATE and so already excludes writers.
  forUpdate: (query) => query,
  lockUntilCommit: async () => undefined,
  isConnectionError: (error) => errorCode(error) === 'SQLITE_CANTOPEN',
  // SQLITE_BUSY reaches us only after the connection waited its whole busy wait (sqlite.ts); a
  // write on the writer thread (db/write-tasks.ts) fails as the buffer does if the thread stops.
  isUnavailable: (error) => {
    const code = errorCode(error);
    return code === 'SQLITE_CANTOPEN' || code?.startsWith('SQLITE_BUSY') === true || error instanceof BufferUnavailableError;
  },
  // json_type tells numbers from booleans (json_extract reads true as 1); SQLite caches the
  // parsed document within a statement, so the second call does not parse again.
  jsonNumberAt: (column, keys) => {
    const path = sqliteJsonPath(keys);
    const ref = sql.ref(column);
    return sql<number | null>`(CASE WHEN json_type(${ref}, ${path}) IN ('integer', 'real') THEN json_extract(${ref}, ${path}) END)`;
  },
  jsonTextAt: (column, key) => sql<string | null>`json_extract(${sql.ref(column)}, ${sqliteJsonPath([key])})`,
  // SQLite's default collation, BINARY, already compares UTF-8 bytes.
  inCodePointOrder: (expression) => expression,
  // SQLite's own lower() folds ASCII only (without the ICU extension, which Verdict does not load).
  asciiLowerCase: (expression) => sql<string>`lower(${expression})`,
};

const PG_CONNECTION_CODES = new Set([
  ...SOCKET_ERROR_CODES,
  // admin_shutdown, crash_shutdown, cannot_connect_now; the connection_exception class; too_many_connections
  ...['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300'],
]);

/**
 * A lost or refused connection: the socket's own errors, the server ending sessions (restart,
 * shutdown, crash recovery, "starting up") and pg's messages for a connection that ended or
 * could not be made in time.
 */
function isPostgresConnectionError(error: unknown): boolean {
  const code = errorCode(error);
  if (code && PG_CONNECTION_CODES.has(code)) return true;
  return (
    error instanceof Error &&
    /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error/.test(error.message)
  );
}

export const postgresSeam: DialectSeam = {
  name: 'postgres',
  isUniqueViolation: (error) => errorCode(error) === '23505',
  skipLocked: (query) => query.forUpdate().skipLocked(),
  forUpdate: (query) => query.forUpdate(),
  lockUntilCommit: async (trx, name) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
  },
  isConnectionError: isPostgresConnectionError,
  isUnavailable: isPostgresConnectionError,
  // json, not jsonb: parsing text as json is a quick validating scan, measurably cheaper than
  // building a jsonb value per event (measured with the benchmarks in bench/). `#>` returns the value's JSON text,
  // and in valid JSON only a number starts with a digit or '-' (strings are quoted, the rest
  // are words or brackets), so one extraction both tells a number and gives it; json_typeof
  // would parse the document a second time for every event.
  jsonNumberAt: (column, keys) => {
    const json = sql`(${sql.ref(column)})::json`;
    const path = [...keys];
    return sql<number | null>`substring((${json} #> ${path}::text[])::text from '^-?[0-9].*$')::double precision`;
  },
  jsonTextAt: (column, key) => sql<string | null>`((${sql.ref(column)})::json ->> ${key})`,
  inCodePointOrder: (expression) => sql`${expression} COLLATE "C"`,
  asciiLowerCase: (expression) => sql<string>`translate(${expression}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')`,
};

/** Runs `work` and turns a unique-constraint violation into the caller's conflict problem. */
export async function uniqueViolationAs<T>(seam: DialectSeam, work: () => Promise<T>, conflict: () => Error): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (seam.isUniqueViolation(error)) throw conflict();
    throw error;
  }
}

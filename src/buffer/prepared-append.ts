import type BetterSqlite3 from 'better-sqlite3';
import type { Db } from '../db/database.js';
import type { BulkInsert } from '../db/bulk-insert.js';
import { chunksOf, claimsOf, dedupeKeyOf, insertChunkRows, insertDedupeRows, type DedupeKey } from './embedded-store.js';
import type { AppendStatements } from './embedded-writer.js';
import type { BufferedEvent } from './types.js';

/**
 * The embedded buffer's append on the writer thread, with its statements prepared once on the
 * thread's SQLite connection and run synchronously. Through Kysely each append built and ran its
 * statements through several promise hops: on the writer thread that cost about as much CPU as
 * SQLite's own work for a group of single events (docs/benchmarks.md). The SQL is the same:
 * compiled from the same Kysely builders (BulkInsert), once per statement size.
 *
 * `connection` must be the connection under the `db` the buffer's transactions run on: these
 * statements run inside that transaction (claimKeys and storeChunks are only called in one),
 * where Kysely holds the connection, so nothing else on the thread runs between them.
 */
export class PreparedAppendStatements implements AppendStatements {
  readonly #connection: BetterSqlite3.Database;
  readonly #db: Db;
  /** Prepared statements by the insert they run and their size. */
  readonly #prepared = new Map<unknown, Map<number, BetterSqlite3.Statement>>();

  constructor(connection: BetterSqlite3.Database, db: Db) {
    this.#connection = connection;
    this.#db = db;
  }

  claimKeys(_trx: unknown, keys: DedupeKey[], expiresAt: number): Set<string> {
    const claimed = new Set<string>();
    for (const slice of insertDedupeRows.slices(claimsOf(keys, expiresAt))) {
      const rows = this.#statement(insertDedupeRows, slice).all(insertDedupeRows.parametersOf(slice)) as DedupeKey[];
      for (const row of rows) claimed.add(dedupeKeyOf(row.workspace_id, row.client_event_id));
    }
    return claimed;
  }

  storeChunks(_trx: unknown, events: BufferedEvent[], now: number): void {
    for (const slice of insertChunkRows.slices(chunksOf(events, now))) {
      this.#statement(insertChunkRows, slice).run(insertChunkRows.parametersOf(slice));
    }
  }

  #statement<Row extends object>(insert: BulkInsert<Row>, slice: readonly Row[]): BetterSqlite3.Statement {
    let bySize = this.#prepared.get(insert);
    if (!bySize) this.#prepared.set(insert, (bySize = new Map()));
    let statement = bySize.get(slice.length);
    if (!statement) {
      statement = this.#connection.prepare(insert.sqlOf(this.#db, slice));
      bySize.set(slice.length, statement);
    }
    return statement;
  }
}

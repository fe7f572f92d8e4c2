import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqlite } from '../db/sqlite.js';

/**
 * The embedded buffer's own SQLite file, beside the main one, when its writes run on threads
 * (thread-writer.ts). SQLite lets one writer into a file at a time: with the buffer's tables in
 * the main file, every acknowledgement of an event waited behind the drain that moved earlier
 * events into the events table (20-40 ms under load) and behind the first assignments written in
 * between. In a file of its own an append waits only for other appends.
 *
 * `data/verdict.sqlite` keeps its buffer in `data/verdict.buffer.sqlite`.
 */
export function bufferFileOf(databaseFile: string): string {
  const { dir, name, ext } = path.parse(databaseFile);
  return path.join(dir, `${name}.buffer${ext || '.sqlite'}`);
}

// The same tables as in the main database (migration 0003), where the buffer lives when its
// writes run on the API's thread or on PostgreSQL.
const BUFFER_SCHEMA = `
  CREATE TABLE IF NOT EXISTS event_buffer (
    id text PRIMARY KEY,
    event_count integer NOT NULL,
    payload text NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE TABLE IF NOT EXISTS event_dedupe (
    workspace_id text NOT NULL,
    client_event_id text NOT NULL,
    expires_at bigint NOT NULL,
    CONSTRAINT event_dedupe_pk PRIMARY KEY (workspace_id, client_event_id)
  );
  CREATE INDEX IF NOT EXISTS event_dedupe_expiry_idx ON event_dedupe (expires_at);
`;

/** Opens the buffer's file, creating it and its tables when they are missing. */
export function openBufferFile(file: string): BetterSqlite3.Database {
  const connection = openSqlite(file);
  connection.exec(BUFFER_SCHEMA);
  return connection;
}

/** Rows moved per transaction, so a large move never holds either file's lock for long. */
const MOVE_BATCH = 5_000;

export type BufferHome = 'main' | 'buffer';

/**
 * Moves whatever the buffer's tables in one home hold into the other's: at start, so events
 * acknowledged before an upgrade (buffer in the main file) or before the writer thread was turned
 * off (buffer in its own file) are still drained, and their de-duplication keys still count.
 * Each batch is inserted, then deleted from where it was, in one transaction over both files;
 * SQLite in WAL mode makes that atomic per file only, so a crash in between leaves rows in both
 * homes, and the next start moves them again: chunks and keys are matched by their keys, and
 * the events table ignores an event it already holds.
 */
export function moveBufferedRows(databaseFile: string, to: BufferHome): { chunks: number; keys: number } {
  const bufferFile = bufferFileOf(databaseFile);
  if (to === 'main' && !fs.existsSync(bufferFile)) return { chunks: 0, keys: 0 };
  if (to === 'buffer') openBufferFile(bufferFile).close();
  const connection = openSqlite(databaseFile);
  try {
    connection.prepare('ATTACH DATABASE ? AS buffer').run(bufferFile);
    const from: BufferHome = to === 'main' ? 'buffer' : 'main';
    // A main file not migrated yet has no buffer tables, and nothing to move.
    if (!hasBufferTables(connection, 'main')) return { chunks: 0, keys: 0 };
    const chunks = moveInBatches(connection, from, to, 'event_buffer', ['id', 'event_count', 'payload', 'created_at'], 'ON CONFLICT (id) DO NOTHING');
    const keys = moveInBatches(
      connection,
      from,
      to,
      'event_dedupe',
      ['workspace_id', 'client_event_id', 'expires_at'],
      'ON CONFLICT (workspace_id, client_event_id) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)',
    );
    return { chunks, keys };
  } finally {
    connection.close();
  }
}

function hasBufferTables(connection: BetterSqlite3.Database, home: BufferHome): boolean {
  const found = connection
    .prepare(`SELECT count(*) AS n FROM ${home}.sqlite_master WHERE type = 'table' AND name IN ('event_buffer', 'event_dedupe')`)
    .get() as { n: number };
  return found.n === 2;
}

function moveInBatches(connection: BetterSqlite3.Database, from: BufferHome, to: BufferHome, table: string, columns: string[], onConflict: string): number {
  const list = columns.join(', ');
  const batch = `SELECT rowid FROM ${from}.${table} ORDER BY rowid LIMIT ${MOVE_BATCH}`;
  const copy = connection.prepare(`INSERT INTO ${to}.${table} (${list}) SELECT ${list} FROM ${from}.${table} WHERE rowid IN (${batch}) ${onConflict}`);
  const remove = connection.prepare(`DELETE FROM ${from}.${table} WHERE rowid IN (${batch})`);
  const moveBatch = connection.transaction(() => {
    copy.run();
    return remove.run().changes;
  });
  let moved = 0;
  for (;;) {
    const removed = moveBatch.immediate();
    moved += removed;
    if (removed < MOVE_BATCH) return moved;
  }
}

import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bufferFileOf, moveBufferedRows, openBufferFile } from '../../src/buffer/buffer-file.js';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

// The embedded buffer's own SQLite file (src/buffer/buffer-file.ts): where it is, and how rows
// left in the other home are moved at start.

describe('the buffer file', () => {
  it('sits beside the main file, named after it', () => {
    expect(bufferFileOf('/data/verdict.sqlite')).toBe('/data/verdict.buffer.sqlite');
    expect(bufferFileOf('/srv/app.db')).toBe('/srv/app.buffer.db');
    expect(bufferFileOf('/srv/events')).toBe('/srv/events.buffer.sqlite');
  });
});

describe('moving buffered rows between the main file and the buffer file', () => {
  let database: TestDatabase;
  let file: string;
  let main: BetterSqlite3.Database;

  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    file = database.config.kind === 'sqlite' ? database.config.file : '';
    const handle = openDatabase(database.config);
    await migrateToLatest(handle.db);
    await handle.destroy();
    main = new BetterSqlite3(file);
  });

  afterEach(async () => {
    main.close();
    await database.drop();
  });

  const chunk = (id: string) => ({ id, event_count: 1, payload: `[{"id":"${id}"}]`, created_at: 1 });
  const insertChunk = (connection: BetterSqlite3.Database, id: string) =>
    connection.prepare('INSERT INTO event_buffer (id, event_count, payload, created_at) VALUES (@id, @event_count, @payload, @created_at)').run(chunk(id));
  const insertKey = (connection: BetterSqlite3.Database, id: string, expiresAt: number) =>
    connection.prepare("INSERT INTO event_dedupe (workspace_id, client_event_id, expires_at) VALUES ('ws', ?, ?)").run(id, expiresAt);
  const rows = (connection: BetterSqlite3.Database) => ({
    chunks: connection.prepare('SELECT id, event_count, payload, created_at FROM event_buffer ORDER BY id').all(),
    keys: connection.prepare('SELECT client_event_id, expires_at FROM event_dedupe ORDER BY client_event_id').all(),
  });

  it('moves every chunk and key of the main file into the buffer file, in batches, and leaves the main tables empty', () => {
    const count = 12_345;
    main.transaction(() => {
      for (let n = 0; n < count; n += 1) {
        insertChunk(main, `c${String(n).padStart(6, '0')}`);
        insertKey(main, `k${n}`, 1_000 + n);
      }
    })();
    expect(moveBufferedRows(file, 'buffer')).toEqual({ chunks: count, keys: count });
    expect(rows(main)).toEqual({ chunks: [], keys: [] });
    const buffer = openBufferFile(bufferFileOf(file));
    try {
      const moved = rows(buffer);
      expect(moved.chunks).toHaveLength(count);
      expect(moved.chunks[0]).toEqual(chunk('c000000'));
      expect(moved.keys).toHaveLength(count);
      expect(moveBufferedRows(file, 'buffer')).toEqual({ chunks: 0, keys: 0 });
    } finally {
      buffer.close();
    }
  });

  it('keeps one copy of rows a crash left in both homes, with the later expiry of a key', () => {
    const buffer = openBufferFile(bufferFileOf(file));
    try {
      insertChunk(buffer, 'both');
      insertKey(buffer, 'earlier-here', 5_000);
      insertKey(buffer, 'later-here', 9_000);
      insertChunk(main, 'both');
      insertKey(main, 'earlier-here', 7_000);
      insertKey(main, 'later-here', 8_000);
      insertChunk(main, 'main-only');
      expect(moveBufferedRows(file, 'buffer')).toEqual({ chunks: 2, keys: 2 });
      expect(rows(buffer)).toEqual({
        chunks: [chunk('both'), chunk('main-only')],
        keys: [
          { client_event_id: 'earlier-here', expires_at: 7_000 },
          { client_event_id: 'later-here', expires_at: 9_000 },
        ],
      });
      // And back, as when the writer threads are turned off.
      expect(moveBufferedRows(file, 'main')).toEqual({ chunks: 2, keys: 2 });
      expect(rows(buffer)).toEqual({ chunks: [], keys: [] });
      expect(rows(main).chunks).toEqual([chunk('both'), chunk('main-only')]);
    } finally {
      buffer.close();
    }
  });

  it('creates no buffer file when there is none to move back from', () => {
    insertChunk(main, 'stays');
    expect(moveBufferedRows(file, 'main')).toEqual({ chunks: 0, keys: 0 });
    expect(rows(main).chunks).toEqual([chunk('stays')]);
    expect(fs.existsSync(bufferFileOf(file))).toBe(false);
  });
});

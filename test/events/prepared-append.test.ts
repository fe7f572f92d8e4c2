import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InlineBufferWriter, type CommittedGroup } from '../../src/buffer/embedded-writer.js';
import { PreparedAppendStatements } from '../../src/buffer/prepared-append.js';
import { DEDUPE_WINDOW_MS, type BufferedEvent } from '../../src/buffer/types.js';
import { migrateToLatest, type Db } from '../../src/db/database.js';
import { sqliteSeam } from '../../src/db/dialect.js';
import type { Database } from '../../src/db/schema.js';
import { openSqlite, sqliteDialectOn } from '../../src/db/sqlite.js';
import { newId } from '../../src/lib/ids.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

// The writer thread appends with statements prepared on its own connection
// (src/buffer/prepared-append.ts); every other buffer appends through Kysely. Both must decide
// and store the same: the same groups go to one database each way, and outcomes and rows are compared.

function event(clientEventId: string | null, workspaceId = 'ws_a', unit = 'u1'): BufferedEvent {
  return {
    id: newId(),
    workspace_id: workspaceId,
    unit_id: unit,
    event_key: 'purchase',
    properties: JSON.stringify({ amount: 3, note: 'it\'s "quoted" – ünïcode' }),
    occurred_at: 1_000,
    received_at: 1_000,
    late: 0,
    client_event_id: clientEventId,
  };
}

interface Side {
  database: TestDatabase;
  connection: BetterSqlite3.Database;
  db: Db;
  writer: InlineBufferWriter;
}

async function openSide(prepared: boolean): Promise<Side> {
  const database = await createTestDatabase('sqlite');
  const file = database.config.kind === 'sqlite' ? database.config.file : '';
  const connection = openSqlite(file);
  const db = new Kysely<Database>({ dialect: sqliteDialectOn(() => connection) });
  await migrateToLatest(db);
  const writer = new InlineBufferWriter(db, sqliteSeam, prepared ? new PreparedAppendStatements(connection, db) : undefined);
  return { database, connection, db, writer };
}

/** What a side holds, without the ids it made itself (chunk ids). */
async function contents(side: Side) {
  const keys = await side.db.selectFrom('event_dedupe').selectAll().orderBy('workspace_id').orderBy('client_event_id').execute();
  const chunks = await side.db.selectFrom('event_buffer').select(['event_count', 'payload', 'created_at']).orderBy('id').execute();
  return { keys, chunks: chunks.map((chunk) => ({ ...chunk, payload: JSON.parse(chunk.payload) as BufferedEvent[] })) };
}

describe("the writer thread's prepared append", () => {
  let kysely: Side;
  let prepared: Side;

  beforeEach(async () => {
    [kysely, prepared] = await Promise.all([openSide(false), openSide(true)]);
  });

  afterEach(async () => {
    for (const side of [kysely, prepared]) {
      await side.db.destroy();
      await side.database.drop();
    }
  });

  async function appendBoth(groups: BufferedEvent[][], now: number): Promise<CommittedGroup> {
    const [viaKysely, viaPrepared] = await Promise.all([kysely.writer.append(groups, now), prepared.writer.append(groups, now)]);
    expect(viaPrepared).toEqual(viaKysely);
    return viaPrepared;
  }

  it('decides and stores exactly as the Kysely statements do, across statement sizes, chunks, repeats and expired keys', async () => {
    // 300 distinct keys take statements of 256, 32, 8 and 4 rows; 612 events take seven chunks of at most 100.
    const many = Array.from({ length: 300 }, (_, index) => event(`k-${index}`, index % 2 === 0 ? 'ws_a' : 'ws_b', `u${index % 7}`));
    const anonymous = Array.from({ length: 310 }, () => event(null));
    const repeatedInRequest = [event('dup'), event('dup')];
    const repeatedAcrossRequests = [[event('shared')], [event('shared')]];
    const first = await appendBoth([many, anonymous, repeatedInRequest, ...repeatedAcrossRequests], 5_000);
    expect(first.accepted).toBe(300 + 310 + 1 + 1);
    expect(first.outcomes[2]).toEqual(['accepted', 'replay']);
    expect(first.outcomes[3]).toEqual(['accepted']);
    expect(first.outcomes[4]).toEqual(['replay']);

    // Within the window a key is a replay; a key no one used yet is new.
    const again = await appendBoth([[event('k-0'), event('k-1', 'ws_b'), event('fresh')]], 5_000 + DEDUPE_WINDOW_MS - 1);
    expect(again.outcomes).toEqual([['replay', 'replay', 'accepted']]);

    // Once the window has passed, the key may be used again (the purge has not run).
    const later = await appendBoth([[event('k-0'), event('dup')]], 5_000 + DEDUPE_WINDOW_MS);
    expect(later.outcomes).toEqual([['accepted', 'accepted']]);

    const [stored, storedPrepared] = await Promise.all([contents(kysely), contents(prepared)]);
    expect(storedPrepared).toEqual(stored);
    expect(stored.keys).toHaveLength(300 + 1 + 1 + 1);
    expect(stored.chunks.map((chunk) => chunk.event_count)).toEqual([100, 100, 100, 100, 100, 100, 12, 1, 2]);
  });

  it('stores nothing of a group whose transaction fails', async () => {
    prepared.connection.exec('DROP TABLE event_buffer');
    await expect(prepared.writer.append([[event('lost')]], 5_000)).rejects.toThrow(/event_buffer/);
    const keys = await prepared.db.selectFrom('event_dedupe').selectAll().execute();
    expect(keys).toEqual([]);
  });
});

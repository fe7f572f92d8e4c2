import { Worker } from 'node:worker_threads';
import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedEventBuffer } from '../../src/buffer/embedded.js';
import { ThreadBufferWriter } from '../../src/buffer/thread-writer.js';
import { WRITER_THREAD_ENTRY } from '../../src/app/writer-tasks.js';
import { bufferFileOf, openBufferFile } from '../../src/buffer/buffer-file.js';
import { BufferUnavailableError, type BufferedEvent } from '../../src/buffer/types.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { insertEvents } from '../../src/features/events/store.js';
import { newId } from '../../src/lib/ids.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startEventDrainer } from '../../src/features/events/background.js';
import { ManualClock } from '../support/clock.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startTestServer } from '../support/server.js';
import { drained, storedEvents, uniqueEventId } from './support.js';

// The embedded buffer's writer thread (src/buffer/thread-writer.ts) on a real SQLite file: what
// the API thread is promised back, and what happens when the thread dies.

function event(clientEventId: string | null, workspaceId = 'ws_thread'): BufferedEvent {
  return {
    id: newId(),
    workspace_id: workspaceId,
    unit_id: 'u1',
    event_key: 'purchase',
    properties: '{}',
    occurred_at: 1_000,
    received_at: 1_000,
    late: 0,
    client_event_id: clientEventId,
  };
}

describe('the embedded buffer on its writer thread', () => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  let started: Worker[];
  let buffer: EmbeddedEventBuffer;
  let writer: ThreadBufferWriter;
  /** The buffer's own file, beside the main one, read directly. */
  let bufferFile: BetterSqlite3.Database;

  beforeEach(async () => {
    database = await createTestDatabase('sqlite');
    handle = openDatabase(database.config);
    await migrateToLatest(handle.db);
    started = [];
    const file = database.config.kind === 'sqlite' ? database.config.file : '';
    writer = new ThreadBufferWriter(file, WRITER_THREAD_ENTRY, (url, options) => {
      const worker = new Worker(url, options);
      started.push(worker);
      return worker;
    });
    buffer = new EmbeddedEventBuffer({ db: handle.db, seam: handle.seam, clock: new ManualClock(5_000), maxPending: 100_000, writer });
    bufferFile = openBufferFile(bufferFileOf(file));
  });

  afterEach(async () => {
    bufferFile.close();
    await buffer.close();
    await handle.destroy();
    await database.drop();
  });

  it('gives each concurrent caller its own outcomes, deciding repeats across everything committed together', async () => {
    const answers = await Promise.all([
      buffer.append([event('a'), event('b')]),
      buffer.append([event('a'), event(null)]),
      buffer.append([event('c'), event('c')]),
    ]);
    expect(answers).toEqual([
      ['accepted', 'accepted'],
      ['replay', 'accepted'],
      ['accepted', 'replay'],
    ]);
    expect(await buffer.append([event('b'), event('d')])).toEqual(['replay', 'accepted']);
    expect((await buffer.status()).pending).toBe(5);
    const claimed = bufferFile.prepare('SELECT client_event_id, expires_at FROM event_dedupe ORDER BY client_event_id').all() as Array<{
      client_event_id: string;
      expires_at: number;
    }>;
    expect(claimed.map((row) => row.client_event_id)).toEqual(['a', 'b', 'c', 'd']);
    // The API thread's clock, not the writer thread's, dates the claims.
    expect(claimed.every((row) => Number(row.expires_at) > 5_000)).toBe(true);
    expect(started).toHaveLength(1);
  });

  it('drains in short transactions, says when more is waiting, and stores every event once', async () => {
    // Three requests of 250 events, each stored as chunks of 100, 100 and 50: a drain moves whole
    // chunks, at least one, and at most 100 events while the backlog is short.
    for (let request = 0; request < 3; request += 1) await buffer.append(Array.from({ length: 250 }, (_, n) => event(`e${request}-${n}`)));
    const rounds: Array<{ drained: number; more: boolean }> = [];
    for (;;) {
      const round = await buffer.drain(insertEvents, 10_000);
      rounds.push(round);
      if (!round.more) break;
    }
    expect(rounds.map((round) => round.drained)).toEqual([100, 100, 50, 100, 100, 50, 100, 100, 50]);
    expect(rounds.map((round) => round.more)).toEqual([true, true, true, true, true, true, true, true, false]);
    const stored = await handle.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(750);
    expect((await buffer.status()).pending).toBe(0);
  });

  it('drains while appends keep arriving, deleting each drained chunk once, and stores every event once', async () => {
    const appended = Promise.all(Array.from({ length: 40 }, (_, request) => buffer.append(Array.from({ length: 50 }, (_, n) => event(`c${request}-${n}`)))));
    let total = 0;
    let settled = false;
    void appended.then(() => (settled = true));
    for (;;) {
      const round = await buffer.drain(insertEvents, 10_000);
      total += round.drained;
      if (settled && !round.more && (await buffer.status()).pending === 0) break;
      // An empty buffer answers without the thread, in microtasks only: let the appends' replies in.
      if (round.drained === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect((await appended).flat().every((outcome) => outcome === 'accepted')).toBe(true);
    expect(total).toBe(2_000);
    const stored = await handle.db
      .selectFrom('events')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.count<number>('client_event_id').distinct().as('distinct')])
      .executeTakeFirstOrThrow();
    expect([Number(stored.n), Number(stored.distinct)]).toEqual([2_000, 2_000]);
    expect(bufferFile.prepare('SELECT COUNT(*) AS n FROM event_buffer').get()).toEqual({ n: 0 });
  });

  it('forgets expired de-duplication keys on the thread, and only those', async () => {
    await buffer.append([event('expiring'), event('kept')]);
    bufferFile.prepare("UPDATE event_dedupe SET expires_at = 1000 WHERE client_event_id = 'expiring'").run();
    expect(await buffer.purgeExpiredKeys(5_000)).toBe(1);
    expect(await buffer.purgeExpiredKeys(5_000)).toBe(0);
    expect(bufferFile.prepare('SELECT client_event_id FROM event_dedupe').pluck().all()).toEqual(['kept']);
    expect(await buffer.append([event('expiring'), event('kept')])).toEqual(['accepted', 'replay']);
  });

  it('starts both threads when warmed (serve does, before it listens), once, and the first requests use them', async () => {
    writer.warm();
    writer.warm();
    expect(started).toHaveLength(2);
    expect(await buffer.append([event('warm')])).toEqual(['accepted']);
    expect(await buffer.drain(insertEvents, 10_000)).toEqual({ drained: 1, more: false });
    expect(started).toHaveLength(2);
  });

  it('does not start the thread for a drain that finds nothing buffered', async () => {
    expect(await buffer.drain(insertEvents, 100)).toEqual({ drained: 0, more: false });
    expect(started).toHaveLength(0);
  });

  it("refuses to drain into a function outside the thread's registry of tasks", async () => {
    await buffer.append([event('x')]);
    const anonymous = async () => undefined;
    await expect(buffer.drain(anonymous, 100)).rejects.toThrow(/persist function of its registry/);
    const unregistered = Object.assign(async () => undefined, { writerTask: 'events.elsewhere' });
    await expect(buffer.drain(unregistered, 100)).rejects.toThrow(/no persist task named events.elsewhere/);
    expect((await buffer.status()).pending).toBe(1);
  });

  it('fails the calls in flight as unavailable when the thread dies, and starts a new one for the next', async () => {
    expect(await buffer.append([event('before')])).toEqual(['accepted']);
    const [first] = started;
    const lost = buffer.append([event('in-flight')]);
    // The group is handed over on the next turn of the event loop; the thread dies as it arrives.
    await new Promise((resolve) => setImmediate(resolve));
    await first?.terminate();
    await expect(lost).rejects.toBeInstanceOf(BufferUnavailableError);
    expect(await buffer.append([event('after'), event('before')])).toEqual(['accepted', 'replay']);
    expect(started).toHaveLength(2);
  });

  it('acknowledges events while the main file is locked for writing, and drains them once it is not', async () => {
    // Another process's long write transaction on the main file (a migration, a `verdict` command).
    const other = new BetterSqlite3(database.config.kind === 'sqlite' ? database.config.file : '');
    try {
      expect(await buffer.append([event('first')])).toEqual(['accepted']);
      other.exec('begin immediate');
      let drainSettled = false;
      const draining = buffer.drain(insertEvents, 100).finally(() => (drainSettled = true));
      // The drain waits for the main file's lock; the next acknowledgement does not wait for the drain.
      expect(await buffer.append([event('second'), event('first')])).toEqual(['accepted', 'replay']);
      expect(drainSettled).toBe(false);
      other.exec('rollback');
      let moved = (await draining).drained;
      while (moved < 2) moved += (await buffer.drain(insertEvents, 100)).drained;
      const stored = await handle.db.selectFrom('events').select('client_event_id').orderBy('client_event_id').execute();
      expect(stored.map((row) => row.client_event_id)).toEqual(['first', 'second']);
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    }
  });

  it('stores the events of chunks drained but not yet deleted (a crash between the two files) once when drained again', async () => {
    await buffer.append([event('x'), event(null)]);
    const chunks = bufferFile.prepare('SELECT id, event_count, payload, created_at FROM event_buffer').all();
    expect(await buffer.drain(insertEvents, 100)).toEqual({ drained: 2, more: false });
    // The main file committed the events; the buffer's file still holds their chunk.
    const insert = bufferFile.prepare('INSERT INTO event_buffer (id, event_count, payload, created_at) VALUES (@id, @event_count, @payload, @created_at)');
    for (const chunk of chunks) insert.run(chunk);
    expect((await buffer.status()).pending).toBe(2);
    expect((await buffer.drain(insertEvents, 100)).drained).toBe(2);
    const stored = await handle.db.selectFrom('events').select('client_event_id').execute();
    expect(stored.map((row) => row.client_event_id).sort()).toEqual([null, 'x']);
    expect((await buffer.status()).pending).toBe(0);
  });
});

describe.each([
  ['an upgrade: the buffer in the main file, then the writer threads', false, true],
  ['the writer threads turned off: the buffer in its own file, then the main one', true, false],
])('events acknowledged before %s', (_label, before, after) => {
  it('are drained after the restart, and their client_event_ids still answer as replays', async () => {
    const events = (threaded: boolean) => loadConfig({ VERDICT_BUFFER_WRITER_THREAD: threaded ? '1' : '0' }).events;
    const database = await createTestDatabase('sqlite');
    const first = await startTestServer('sqlite', { config: { events: events(before) }, database });
    const { key, workspaceId } = await first.bootstrap();
    const ids = [uniqueEventId('moved'), uniqueEventId('moved')];
    try {
      for (const id of ids) {
        const sent = await first.request('POST', '/v1/events', { key, body: { event_key: 'purchase', unit_id: 'u1', client_event_id: id } });
        expect(sent.status).toBe(202);
      }
      // No drainer ran: the events are only in the buffer when the process stops.
      expect((await first.ctx.buffer.status()).pending).toBe(2);
    } finally {
      await first.close();
    }
    const second = await startTestServer('sqlite', { config: { events: events(after) }, database });
    const drainer = startEventDrainer(second.ctx);
    try {
      const repeat = await second.request('POST', '/v1/events', { key, body: { event_key: 'purchase', unit_id: 'u1', client_event_id: ids[0] } });
      expect(repeat.status).toBe(202);
      expect(repeat.body.idempotent_replay).toBe(true);
      await drained(second);
      expect((await storedEvents(second, workspaceId)).map((row) => row.client_event_id).sort()).toEqual([...ids].sort());
    } finally {
      await drainer.stop();
      await second.close();
      await database.drop();
    }
  });
});

describe.each([
  ['on its writer thread', true],
  ['on the API thread (VERDICT_BUFFER_WRITER_THREAD=0)', false],
])('POST /v1/events with the SQLite buffer %s', (_label, writerThread) => {
  it('acknowledges, answers a repeat as a replay and stores the event once', async () => {
    const events = loadConfig({ VERDICT_BUFFER_WRITER_THREAD: writerThread ? '1' : '0' }).events;
    expect(events.writerThread).toBe(writerThread);
    const server = await startTestServer('sqlite', { config: { events } });
    const drainer = startEventDrainer(server.ctx);
    try {
      const { key, workspaceId } = await server.bootstrap();
      const id = uniqueEventId('switch');
      const send = () => server.request('POST', '/v1/events', { key, body: { event_key: 'purchase', unit_id: 'u1', client_event_id: id } });
      const [first, again] = await Promise.all([send(), send()]);
      expect([first.status, again.status]).toEqual([202, 202]);
      expect([first.body.idempotent_replay, again.body.idempotent_replay].sort()).toEqual([false, true]);
      await drained(server);
      expect((await storedEvents(server, workspaceId)).map((row) => row.client_event_id)).toEqual([id]);
    } finally {
      await drainer.stop();
      await server.close();
    }
  });
});

describe("the writer thread's figures on /metrics", () => {
  const series = (text: string, name: string, operation: string) =>
    Number(new RegExp(`^${name}\\{operation="${operation}"\\} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);

  it('counts the time and the pieces of each kind of work, and the longest since the previous scrape', async () => {
    const server = await startTestServer('sqlite');
    const drainer = startEventDrainer(server.ctx);
    try {
      const { key } = await server.bootstrap();
      const before = (await server.request('GET', '/metrics')).text;
      expect(series(before, 'verdict_buffer_writer_operations_total', 'append')).toBe(0);
      for (let i = 0; i < 5; i += 1) {
        const sent = await server.request('POST', '/v1/events', { key, body: { event_key: 'purchase', unit_id: `u${i}` } });
        expect(sent.status).toBe(202);
      }
      await drained(server);
      // Each thread (appends on one, drains on the other) hands its tallies over about once a
      // second, each on its own beat: the longest append is the one of the scrape that first saw them.
      let text = '';
      let longest = 0;
      for (let waited = 0; waited < 5_000; waited += 250) {
        text = (await server.request('GET', '/metrics')).text;
        longest = Math.max(longest, series(text, 'verdict_buffer_writer_longest_seconds', 'append'));
        const releases = series(text, 'verdict_buffer_writer_operations_total', 'release');
        if (series(text, 'verdict_buffer_writer_operations_total', 'drain') > 0 && releases > 0 && longest > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const appends = series(text, 'verdict_buffer_writer_operations_total', 'append');
      expect(appends).toBeGreaterThanOrEqual(1);
      expect(appends).toBeLessThanOrEqual(5);
      expect(series(text, 'verdict_buffer_writer_operations_total', 'drain')).toBeGreaterThanOrEqual(1);
      // The drained chunks are deleted by the buffer's thread, counted there.
      expect(series(text, 'verdict_buffer_writer_operations_total', 'release')).toBeGreaterThanOrEqual(1);
      expect(series(text, 'verdict_buffer_writer_seconds_total', 'append')).toBeGreaterThan(0);
      expect(longest).toBeGreaterThan(0);
      expect(longest).toBeLessThanOrEqual(series(text, 'verdict_buffer_writer_seconds_total', 'append'));
      // Scraped again with no new append: the longest restarts; the totals stay.
      const again = (await server.request('GET', '/metrics')).text;
      expect(series(again, 'verdict_buffer_writer_longest_seconds', 'append')).toBe(0);
      expect(series(again, 'verdict_buffer_writer_operations_total', 'append')).toBe(appends);
    } finally {
      await drainer.stop();
      await server.close();
    }
  });
});

describe("the SQLite file's checkpoints", () => {
  it('keep the WAL file bounded while events arrive without a pause and a reader keeps reading', async () => {
    const server = await startTestServer('sqlite');
    const drainer = startEventDrainer(server.ctx);
    const file = server.ctx.config.database.kind === 'sqlite' ? server.ctx.config.database.file : '';
    try {
      const { key } = await server.bootstrap();
      const properties = { note: 'x'.repeat(1_000) };
      // About 20 MB of events, each written twice (the buffer, then the events table), sent four
      // batches at a time so the writer keeps appending, while a reader keeps reading: a WAL that
      // is never started over grows past all of it.
      const reader = new BetterSqlite3(file, { readonly: true });
      const send = async (stream: number) => {
        for (let batch = 0; batch < 10; batch += 1) {
          const events = Array.from({ length: 500 }, (_, i) => ({ event_key: 'purchase', unit_id: `u${stream}-${batch}-${i}`, properties }));
          const sent = await server.request('POST', '/v1/events/batch', { key, body: { events } });
          expect(sent.status).toBe(202);
          reader.prepare('SELECT COUNT(*) AS n FROM event_buffer').get();
        }
      };
      try {
        await Promise.all([0, 1, 2, 3].map(send));
      } finally {
        reader.close();
      }
      await drained(server);
      expect(fs.statSync(`${file}-wal`).size).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await drainer.stop();
      await server.close();
    }
  });
});

describe('VERDICT_BUFFER_WRITER_THREAD', () => {
  it('is on by default and refuses anything but 1, 0, true or false, naming itself', () => {
    expect(loadConfig({}).events.writerThread).toBe(true);
    expect(() => loadConfig({ VERDICT_BUFFER_WRITER_THREAD: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ VERDICT_BUFFER_WRITER_THREAD: 'yes' })).toThrow(/VERDICT_BUFFER_WRITER_THREAD/);
  });
});

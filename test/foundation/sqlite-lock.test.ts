import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { bufferFileOf, openBufferFile } from '../../src/buffer/buffer-file.js';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Another process (a `verdict worker`, a sibling of `serve --processes N`) holding SQLite's write
 * lock: this process's writes wait for it, and while they wait the event loop keeps serving.
 */
describe('SQLite write lock held by another connection', () => {
  let dir: string;
  let handle: DatabaseHandle;
  let other: BetterSqlite3.Database;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-lock-'));
    const file = path.join(dir, 'verdict.sqlite');
    handle = openDatabase({ kind: 'sqlite', file });
    await migrateToLatest(handle.db);
    other = new BetterSqlite3(file);
  });

  afterEach(async () => {
    if (other.inTransaction) other.exec('rollback');
    other.close();
    await handle.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const insertWorkspace = (id: string) =>
    handle.db
      .transaction()
      .execute((trx) => trx.insertInto('workspaces').values({ id, name: id, slug: id, webhook_secret_enc: 'x', created_at: Date.now() }).execute());

  it('waits for the lock without blocking the event loop, then commits', async () => {
    other.exec('begin immediate');
    const started = performance.now();
    let committedAt = 0;
    const write = insertWorkspace('w1').then(() => (committedAt = performance.now()));
    // A timer due in 20 ms fires on time although the write is still waiting: the loop is free.
    const timerAt = await new Promise<number>((resolve) => setTimeout(() => resolve(performance.now()), 20));
    expect(committedAt).toBe(0);
    expect(timerAt - started).toBeLessThan(150);
    await new Promise((resolve) => setTimeout(resolve, 150));
    other.exec('commit');
    await write;
    expect(committedAt - started).toBeGreaterThanOrEqual(150);
    const rows = await sql<{ n: number }>`select count(*) as n from workspaces where id = 'w1'`.execute(handle.db);
    expect(rows.rows[0]?.n).toBe(1);
  });

  it('reads go on while the other connection writes (WAL), and a plain write waits its turn', async () => {
    other.exec('begin immediate');
    other.prepare('insert into workspaces (id, name, slug, webhook_secret_enc, created_at) values (?, ?, ?, ?, ?)').run('w2', 'w2', 'w2', 'x', Date.now());
    const read = await handle.db.selectFrom('workspaces').select('id').where('id', '=', 'w2').execute();
    expect(read).toEqual([]);
    const plain = handle.db.insertInto('workspaces').values({ id: 'w3', name: 'w3', slug: 'w3', webhook_secret_enc: 'x', created_at: Date.now() }).execute();
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.exec('commit');
    await plain;
    const ids = (await handle.db.selectFrom('workspaces').select('id').orderBy('id').execute()).map((r) => r.id);
    expect(ids).toEqual(['w2', 'w3']);
  });
});

/**
 * Through the API: a request whose write waits for the lock longer than the busy wait (10 s)
 * answers 503 with Retry-After, so a client retries, rather than a 500 that reads as a bug.
 */
describe('SQLite write lock held past the busy wait, through the API', () => {
  let server: TestServer;
  let key: string;
  let other: BetterSqlite3.Database;
  /** Events are acknowledged in the buffer's own file (src/buffer/buffer-file.ts), locked too. */
  let otherBuffer: BetterSqlite3.Database;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    key = (await server.bootstrap()).key;
    const config = server.database.config;
    if (config.kind !== 'sqlite') throw new Error('expected a SQLite test database');
    other = new BetterSqlite3(config.file);
    otherBuffer = openBufferFile(bufferFileOf(config.file));
  });

  afterAll(async () => {
    for (const connection of [other, otherBuffer]) {
      if (connection?.inTransaction) connection.exec('rollback');
      connection?.close();
    }
    await server?.close();
  });

  it('answers 503 + Retry-After to event ingest and to other writes, and serves again once the lock is released', async () => {
    // Verified before the lock, so the requests below wait on their writes only.
    expect((await server.request('GET', '/v1/workspaces/current', { key })).status).toBe(200);
    other.exec('begin immediate');
    otherBuffer.exec('begin immediate');
    const started = Date.now();
    const [event, environment] = await Promise.all([
      server.request('POST', '/v1/events', { key, body: { event_key: 'locked', unit_id: 'u-locked' } }),
      server.request('POST', '/v1/environments', { key, body: { name: 'Locked', slug: 'locked' } }),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
    for (const response of [event, environment]) {
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(response.body).toMatchObject({ type: 'https://verdict.dev/problems/unavailable', status: 503 });
    }
    other.exec('rollback');
    otherBuffer.exec('rollback');

    // Nothing was stored by the refused requests; the retries succeed.
    expect(otherBuffer.prepare('SELECT id FROM event_buffer').all()).toEqual([]);
    expect((await server.request('POST', '/v1/events', { key, body: { event_key: 'locked', unit_id: 'u-locked' } })).status).toBe(202);
    expect((await server.request('POST', '/v1/environments', { key, body: { name: 'Locked', slug: 'locked' } })).status).toBe(201);
  }, 40_000);
});

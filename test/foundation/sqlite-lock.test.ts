import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';

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
    handle.db.transaction().execute((trx) => trx.insertInto('workspaces').values({ id, name: id, slug: id, webhook_secret_enc: 'x', created_at: Date.now() }).execute());

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

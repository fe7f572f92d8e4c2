import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { sqliteSideReads, type SideReads } from './side-reads.js';
import { openSqlite } from './sqlite.js';
import { threadNiceValues } from '../../test/support/threads.js';

describe('the side reads of a SQLite file (sticky-cache misses)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-side-reads-'));
  const file = path.join(dir, 'side.sqlite');
  let reads: SideReads | undefined;
  afterEach(async () => {
    await reads?.close();
    reads = undefined;
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  function seeded(): string {
    const db = openSqlite(file);
    db.exec('CREATE TABLE IF NOT EXISTS t (n INTEGER); DELETE FROM t; INSERT INTO t VALUES (1), (2), (3)');
    db.close();
    return file;
  }

  it('answer the first row, or undefined without one', async () => {
    reads = sqliteSideReads(seeded());
    expect(await reads.first(CompiledQuery.raw('SELECT n FROM t WHERE n >= ? ORDER BY n', [2]))).toEqual({ n: 2 });
    expect(await reads.first(CompiledQuery.raw('SELECT n FROM t WHERE n > ?', [3]))).toBeUndefined();
  });

  it('never hold the event loop while a read runs: a timer keeps firing during a long one', async () => {
    reads = sqliteSideReads(seeded());
    // About half a second of work for SQLite, all of it on the read's thread.
    const slow = CompiledQuery.raw('WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3000000) SELECT count(*) AS total FROM c');
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 5);
    const started = performance.now();
    try {
      expect(await reads.first(slow)).toEqual({ total: 3_000_000 });
    } finally {
      clearInterval(timer);
    }
    const took = performance.now() - started;
    // On the calling thread no tick could fire until the read returned.
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(took / 5 / 4));
    expect(ticks).toBeGreaterThan(3);
  });

  it.runIf(process.platform === 'linux')('run at the serving priority, not the background one of the analysis reads', async () => {
    const before = threadNiceValues().filter((nice) => nice !== 0).length;
    reads = sqliteSideReads(seeded());
    await Promise.all([1, 2, 3].map((n) => reads?.first(CompiledQuery.raw('SELECT n FROM t WHERE n = ?', [n]))));
    expect(threadNiceValues().filter((nice) => nice !== 0)).toHaveLength(before);
  });
});

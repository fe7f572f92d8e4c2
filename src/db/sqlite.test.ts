import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FifoMutex, openSqlite, WAL_SIZE_LIMIT_BYTES } from './sqlite.js';

describe('FifoMutex (the turn on the one SQLite connection)', () => {
  it('hands the lock to waiters in the order they asked, one at a time', async () => {
    const mutex = new FifoMutex();
    const order: string[] = [];
    let holders = 0;
    const work = async (name: string) => {
      await mutex.lock();
      holders += 1;
      expect(holders).toBe(1);
      order.push(name);
      await new Promise((resolve) => setTimeout(resolve, 1));
      holders -= 1;
      mutex.unlock();
    };
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map(work));
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('is free again once the last holder unlocks', async () => {
    const mutex = new FifoMutex();
    await mutex.lock();
    let second = false;
    const waiting = mutex.lock().then(() => (second = true));
    await Promise.resolve();
    expect(second).toBe(false);
    mutex.unlock();
    await waiting;
    mutex.unlock();
    let third = false;
    await mutex.lock().then(() => (third = true));
    expect(third).toBe(true);
  });
});

describe('openSqlite', () => {
  it('gives back the disk a WAL grew to while a reader held a checkpoint off', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-wal-'));
    try {
      const file = path.join(dir, 'wal.sqlite');
      const writer = openSqlite(file);
      writer.pragma('wal_autocheckpoint = 0'); // only the explicit checkpoint below, as on the writer thread's timer
      writer.exec('CREATE TABLE blobs (body blob)');
      const reader = openSqlite(file);
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM blobs').get(); // a long analysis read: its snapshot pins the WAL
      const megabyte = Buffer.alloc(1024 * 1024, 7);
      const insert = writer.prepare('INSERT INTO blobs (body) VALUES (?)');
      const pastTheLimit = WAL_SIZE_LIMIT_BYTES / megabyte.length + 16;
      for (let i = 0; i < pastTheLimit; i++) insert.run(megabyte);
      writer.pragma('wal_checkpoint(PASSIVE)');
      const grown = fs.statSync(`${file}-wal`).size;
      expect(grown).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);

      reader.exec('COMMIT');
      writer.pragma('wal_checkpoint(PASSIVE)'); // now nothing pins it: every frame is copied back
      insert.run(Buffer.from('after')); // the WAL restarts at this commit
      expect(fs.statSync(`${file}-wal`).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
      expect(writer.prepare('SELECT count(*) AS n FROM blobs').get()).toEqual({ n: pastTheLimit + 1 });
      reader.close();
      writer.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { describe, expect, it } from 'vitest';
import { FifoMutex } from './sqlite.js';

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

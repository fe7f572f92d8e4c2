import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BackgroundWrites, MIN_REST_MS } from './background-writes.js';

/** A piece that records when it ran and takes `ms`. */
function piece(log: Array<{ name: string; start: number; end: number }>, name: string, ms: number, fail = false) {
  return async () => {
    const start = performance.now();
    await sleep(ms);
    log.push({ name, start, end: performance.now() });
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
}

describe('background writes', () => {
  it('runs the pieces of several callers one at a time, in the order asked, each answering its own caller', async () => {
    const background = new BackgroundWrites(0);
    const log: Array<{ name: string; start: number; end: number }> = [];
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((name) => background.run(piece(log, name, 15))));
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    expect(log.map((entry) => entry.name)).toEqual(['a', 'b', 'c', 'd']);
    for (let i = 1; i < log.length; i += 1) {
      // Never overlapping, and at least the minimum rest between them.
      expect(log[i]!.start - log[i - 1]!.end).toBeGreaterThanOrEqual(MIN_REST_MS - 1);
    }
  });

  it('rests after each piece for the ratio of what it took before the next one starts', async () => {
    const background = new BackgroundWrites(2);
    const log: Array<{ name: string; start: number; end: number }> = [];
    await Promise.all([background.run(piece(log, 'first', 40)), background.run(piece(log, 'second', 1))]);
    const [first, second] = log;
    // 40 ms of work, then a rest of twice that before the second piece.
    expect(second!.start - first!.end).toBeGreaterThanOrEqual(2 * (first!.end - first!.start) - 2);
  });

  it('answers a failed piece with its error, and the next piece still runs', async () => {
    const background = new BackgroundWrites(0);
    const log: Array<{ name: string; start: number; end: number }> = [];
    const failed = background.run(piece(log, 'broken', 5, true));
    const next = background.run(piece(log, 'next', 5));
    await expect(failed).rejects.toThrow('broken failed');
    await expect(next).resolves.toBe('next');
  });

  it('refuses a negative ratio or one that is not a number', () => {
    expect(() => new BackgroundWrites(-1)).toThrow('the rest ratio must be 0 or more, got -1');
    expect(() => new BackgroundWrites(Number.NaN)).toThrow('must be 0 or more');
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BackgroundWrites, IDLE_PIECE_TARGET_MS, MIN_REST_MS, PIECE_TARGET_MS, PieceSize, SERVING_WINDOW_MS } from './background-writes.js';

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

  it('rests after each piece for the ratio of what it took before the next one starts, while requests arrive', async () => {
    const background = new BackgroundWrites(2);
    background.noteRequest();
    const log: Array<{ name: string; start: number; end: number }> = [];
    await Promise.all([background.run(piece(log, 'first', 40)), background.run(piece(log, 'second', 1))]);
    const [first, second] = log;
    // 40 ms of work, then a rest of twice that before the second piece.
    expect(second!.start - first!.end).toBeGreaterThanOrEqual(2 * (first!.end - first!.start) - 2);
  });

  it('rests only the minimum when no request arrived within the serving window, and sizes pieces for it', async () => {
    const background = new BackgroundWrites(2);
    expect(background.serving).toBe(false);
    expect(background.pieceTargetMs).toBe(IDLE_PIECE_TARGET_MS);
    const log: Array<{ name: string; start: number; end: number }> = [];
    await Promise.all([background.run(piece(log, 'first', 100)), background.run(piece(log, 'second', 1))]);
    const [first, second] = log;
    // A rest of the ratio would be 200 ms or more.
    expect(second!.start - first!.end).toBeLessThan(2 * (first!.end - first!.start));
    expect(second!.start - first!.end).toBeGreaterThanOrEqual(MIN_REST_MS - 1);

    background.noteRequest();
    expect(background.serving).toBe(true);
    expect(background.pieceTargetMs).toBe(PIECE_TARGET_MS);
    await sleep(SERVING_WINDOW_MS + 20);
    expect(background.serving).toBe(false);
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

describe('piece sizes', () => {
  it('scales the next piece so that it takes the target time, at most doubling or halving at a time', () => {
    const size = new PieceSize(1_000, 100, 50_000, 25);
    size.observe(50); // 1,000 took 50 ms: half as many take the target
    expect(size.current).toBe(500);
    size.observe(5); // a fast piece: doubled, not multiplied by five
    expect(size.current).toBe(1_000);
    size.observe(1_000); // one stalled commit: halved, not cut to 25
    expect(size.current).toBe(500);
    size.observe(20);
    expect(size.current).toBe(625);
  });

  it('sizes for the target it is given, and falls to a lower target at once', () => {
    const size = new PieceSize(1_000, 100, 50_000, 25);
    size.observe(50, 250); // 1,000 took 50 ms; 250 ms allow five times as many: doubled
    expect(size.current).toBe(2_000);
    size.observe(250, 25); // requests arrived: a tenth, not half
    expect(size.current).toBe(200);
    size.observe(50, 25); // the same target again: halved at most
    expect(size.current).toBe(100);
  });

  it('keeps within its bounds however fast or slow the pieces are', () => {
    const size = new PieceSize(200, 100, 300, 25);
    for (let i = 0; i < 5; i++) size.observe(10_000);
    expect(size.current).toBe(100);
    for (let i = 0; i < 5; i++) size.observe(0);
    expect(size.current).toBe(300);
    expect(() => new PieceSize(50, 100, 300)).toThrow(/min <= initial/);
  });
});

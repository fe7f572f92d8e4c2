import { describe, expect, it } from 'vitest';
import { RestartBackoff } from './restart-backoff.js';

describe('RestartBackoff', () => {
  it('doubles the wait with each death in a row, up to 30 s, and starts afresh after a minute of serving', () => {
    const backoff = new RestartBackoff();
    expect([backoff.next(5_000), backoff.next(null), backoff.next(null), backoff.next(200)]).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect([backoff.next(null), backoff.next(null), backoff.next(null)]).toEqual([16_000, 30_000, 30_000]);
    expect(backoff.next(60_000)).toBe(1_000);
    expect(backoff.next(null)).toBe(2_000);
  });
});

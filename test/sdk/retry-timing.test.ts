import { describe, expect, it } from 'vitest';
import { backoffMs, retryAfterMs } from '../../sdk/src/http.js';

// How long the SDK waits before repeating a batch: what Retry-After says, in either of its forms,
// or a capped exponential backoff with jitter.

describe('@verdict/sdk retry timing', () => {
  it('reads Retry-After as seconds or as an HTTP date, and ignores what it cannot read', () => {
    const now = Date.parse('2026-11-24T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), now)).toBe(3_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 24 Nov 2026 00:00:05 GMT' }), now)).toBe(5_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 23 Nov 2026 23:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterMs(new Headers(), now)).toBeNull();
  });

  it('doubles the backoff per attempt up to the cap, waiting between half and all of it', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect([0, 1, 2, 3, 10].map((attempt) => backoffMs(attempt, options, () => 0))).toEqual([50, 100, 200, 400, 500]);
    expect([0, 1, 2, 3, 10].map((attempt) => backoffMs(attempt, options, () => 0.999999))).toEqual(
      [100, 200, 400, 800, 1_000].map((ms) => expect.closeTo(ms, 0)),
    );
  });
});

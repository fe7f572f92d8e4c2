import { describe, expect, it } from 'vitest';
import { parseDedupWindow } from './dedup-window.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('parseDedupWindow', () => {
  it.each([
    ['P7D', 7 * DAY],
    ['PT12H', 12 * HOUR],
    ['P1DT2H30M', DAY + 2.5 * HOUR],
    ['P2W', 14 * DAY],
    ['P1W2D', 9 * DAY],
    ['PT90M', 1.5 * HOUR],
    ['PT1S', 1000],
    ['PT1.5H', 1.5 * HOUR],
    ['PT0,5H', 0.5 * HOUR],
    ['P365D', 365 * DAY],
    ['P52W', 364 * DAY],
  ])('reads %s as a fixed number of milliseconds', (text, ms) => {
    expect(parseDedupWindow(text)).toEqual({ ok: true, ms });
  });

  it.each([
    ['P', /names no length/],
    ['PT', /names no length/],
    ['P1DT', /T must be followed/],
    ['7D', /starting with P/],
    ['', /starting with P/],
    ['-P1D', /negative/],
    ['p7d', /upper-case designators \(P7D\)/],
    ['P7d', /upper-case/],
    ['P1H', /go after the T/],
    ['PT1D', /go after the T/],
    ['P1D2H', /go after the T/],
    ['P 7D', /not an ISO 8601 duration/],
    ['P7D ', /not an ISO 8601 duration/],
    ['P1Y', /years and months have no fixed length/],
    ['P1M', /years and months have no fixed length/],
    ['P1Y2M3D', /years and months/],
    ['P1.5DT1H', /only the smallest unit/],
    ['P0D', /longer than zero/],
    ['PT0S', /longer than zero/],
    ['PT0.5S', /at least PT1S/],
    ['P366D', /at most P365D/],
    ['P53W', /at most P365D/],
    ['P99999999999999999999D', /at most P365D/],
  ])('refuses %j with a clear message', (text, message) => {
    const result = parseDedupWindow(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });
});

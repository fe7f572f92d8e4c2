import { describe, expect, it } from 'vitest';
import { LatencyHistogram, Samples } from '../../bench/lib/samples.js';

// The soak's whole-run summary reads a histogram; its figures must agree with the exact
// percentiles of the same latencies to within one bucket (0.5%).
describe("bench:soak's whole-run latency histogram", () => {
  // A long-tailed spread like the soak's: most requests a few ms, a few stalls of hundreds.
  function latencies(count: number): number[] {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    return Array.from({ length: count }, () => (random() < 0.01 ? 100 + random() * 400 : 0.2 + -Math.log(1 - random()) * 4));
  }

  it('gives p50 and p99 within 0.5% of the exact ones, and the exact max and count over the stall threshold', () => {
    const exact = new Samples();
    const histogram = new LatencyHistogram(250);
    for (const ms of latencies(50_000)) {
      exact.add(ms);
      histogram.add(ms);
    }
    const want = exact.summary();
    const got = histogram.summary();
    expect(histogram.count).toBe(50_000);
    expect(got.max).toBe(want.max);
    expect(Math.abs(got.p50 / want.p50 - 1)).toBeLessThanOrEqual(0.005);
    expect(Math.abs(got.p99 / want.p99 - 1)).toBeLessThanOrEqual(0.005);
    expect(histogram.countAbove(250)).toBe(exact.countAbove(250));
    expect(histogram.countAbove(250)).toBeGreaterThan(0);
  });

  it('is zero when empty and refuses a threshold it cannot count exactly', () => {
    const histogram = new LatencyHistogram(250);
    expect(histogram.summary()).toEqual({ p50: 0, p99: 0, max: 0 });
    expect(() => histogram.countAbove(100)).toThrow(/only above 250 ms/);
  });
});

import { describe, expect, it } from 'vitest';
import { quantileArms } from './quantile-arms.js';

// The values a store returns, to each variant's estimate: what counts, the caps and the clusters.
// Expected quantiles by hand with numpy's type 7: h = (n - 1) q.
const rows = [
  { variant_key: 'a', unit_id: 'u1', value: 10 },
  { variant_key: 'a', unit_id: 'u1', value: 30 },
  { variant_key: 'a', unit_id: 'u2', value: 20 },
  { variant_key: 'a', unit_id: 'u3', value: null },
  { variant_key: 'b', unit_id: 'u4', value: 100 },
  { variant_key: 'b', unit_id: 'u5', value: 0 },
];

describe('quantileArms', () => {
  it('takes the event level over every number, the units as clusters', () => {
    const { estimates, cap } = quantileArms(rows, { quantile: 0.5, level: 'event', aggregation: 'sum', capping: null });
    expect(cap).toBeNull();
    expect(estimates.a).toMatchObject({ value: 20, values: 3, units: 2 });
    expect(estimates.b).toMatchObject({ value: 50, values: 2, units: 2 });
  });

  it('gives a unit without a number 0 under sum and leaves it out under mean', () => {
    const sum = quantileArms(rows, { quantile: 0.5, level: 'unit', aggregation: 'sum', capping: null });
    // [0, 10, 20, 30]: h = 1.5
    expect(sum.estimates.a).toMatchObject({ value: 15, values: 4, units: 4 });
    const mean = quantileArms(rows, { quantile: 0.5, level: 'unit', aggregation: 'mean', capping: null });
    expect(mean.estimates.a).toMatchObject({ value: 20, values: 3 });
  });

  it('caps each value, a percentile cap being that quantile of the nonzero values of every variant', () => {
    const absolute = quantileArms(rows, { quantile: 0.9, level: 'event', aggregation: 'sum', capping: { type: 'absolute', value: 25 } });
    expect(absolute.cap).toBe(25);
    // a: [10, 20, 25] (30 capped): h = 1.8, 20 + 0.8 * 5
    expect(absolute.estimates.a?.value).toBe(24);
    const percentile = quantileArms(rows, { quantile: 0.9, level: 'event', aggregation: 'sum', capping: { type: 'percentile', value: 0.75 } });
    // nonzero [10, 20, 30, 100]: h = 2.25, cap = 30 + 0.25 * 70 = 47.5
    expect(percentile.cap).toBe(47.5);
    // b: [0, 47.5]: h = 0.9
    expect(percentile.estimates.b?.value).toBeCloseTo(42.75, 12);
  });
});

import { describe, expect, it } from 'vitest';

import { assertValidWeights, bucketOf, chooseVariant, variantIndexForBucket } from './bucketing.js';
import { hashBucketV2 } from './hashing.js';

const UNITS = 100_000;
const unitIds = Array.from({ length: UNITS }, (_, i) => `user-${i}`);

/**
 * Upper 0.001 critical values of the chi-squared distribution by degrees of freedom (standard
 * table; equal to scipy.stats.chi2.ppf(0.999, df)). The hash is deterministic, so these tests
 * cannot flake: they either always pass or reveal a real skew (an off-by-one at a range
 * boundary, modulo bias, a weight applied to the wrong variant). p > 0.001 is strict enough to
 * catch a 1-point skew on 100,000 units (chi-squared ~ 40 for 50/50 vs 49/51) and loose enough
 * that an honest uniform hash is nowhere near the line.
 */
const CHI2_CRITICAL_P001: Record<number, number> = { 1: 10.828, 2: 13.816, 3: 16.266, 9: 27.877 };

function chiSquared(observed: number[], expected: number[]): number {
  return observed.reduce((sum, o, i) => {
    const e = expected[i] ?? 0;
    return sum + (o - e) ** 2 / e;
  }, 0);
}

function variants(weights: number[]): { key: string; weight: number }[] {
  return weights.map((weight, i) => ({ key: `v${i}`, weight }));
}

describe('chooseVariant', () => {
  it('is deterministic for the same experiment and unit', () => {
    const vs = variants([34, 33, 33]);
    for (const unit of unitIds.slice(0, 200)) {
      expect(chooseVariant('exp-a', unit, vs)).toBe(chooseVariant('exp-a', unit, vs));
    }
  });

  it('returns the caller object, so extra fields such as is_control come back', () => {
    const vs = [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50, is_control: false },
    ];
    expect(vs).toContain(chooseVariant('exp-a', 'user-1', vs));
  });

  it('buckets by hash(seed = experiment key, value = unit id) and cumulative weight', () => {
    // hashV2("seed", "a") = 0.0505 (GrowthBook case) -> bucket 505.
    expect(bucketOf('seed', 'a')).toBe(505);
    expect(chooseVariant('seed', 'a', variants([5, 95])).key).toBe('v1');
    expect(chooseVariant('seed', 'a', variants([6, 94])).key).toBe('v0');
    expect(bucketOf('exp', 'u')).toBe(hashBucketV2('exp', 'u'));
  });

  it('never picks a zero-weight variant', () => {
    const vs = variants([0, 50, 0, 50, 0]);
    const seen = new Set(unitIds.slice(0, 20_000).map((unit) => chooseVariant('zeros', unit, vs).key));
    expect([...seen].sort()).toEqual(['v1', 'v3']);
    expect(chooseVariant('zeros', 'anyone', variants([0, 100])).key).toBe('v1');
    expect(chooseVariant('zeros', 'anyone', variants([100, 0])).key).toBe('v0');
  });

  it.each([[[50, 50]], [[10, 90]], [[34, 33, 33]], [[1, 99]], [[25, 25, 25, 25]]])(
    'splits 100,000 units according to weights %j (chi-squared, p > 0.001)',
    (weights) => {
      const vs = variants(weights);
      const counts = weights.map(() => 0);
      for (const unit of unitIds) {
        const index = vs.indexOf(chooseVariant('split-test', unit, vs));
        counts[index] = (counts[index] ?? 0) + 1;
      }
      const expected = weights.map((w) => (UNITS * w) / 100);
      const critical = CHI2_CRITICAL_P001[weights.length - 1];
      expect(critical).toBeDefined();
      expect(chiSquared(counts, expected)).toBeLessThan(critical ?? 0);
    },
  );

  it('the chi-squared test would catch a one-point skew', () => {
    const observed = [49_000, 51_000];
    expect(chiSquared(observed, [50_000, 50_000])).toBeGreaterThan(CHI2_CRITICAL_P001[1] ?? Infinity);
  });

  it('assigns independently across experiments (4x4 contingency of quartiles, p > 0.001)', () => {
    const table = Array.from({ length: 4 }, () => [0, 0, 0, 0]);
    let sumX = 0;
    let sumY = 0;
    let sumXY = 0;
    let sumXX = 0;
    let sumYY = 0;
    for (const unit of unitIds) {
      const x = bucketOf('checkout-button', unit);
      const y = bucketOf('pricing-page', unit);
      const row = table[Math.floor(x / 2500)];
      if (row !== undefined) {
        row[Math.floor(y / 2500)] = (row[Math.floor(y / 2500)] ?? 0) + 1;
      }
      sumX += x;
      sumY += y;
      sumXY += x * y;
      sumXX += x * x;
      sumYY += y * y;
    }
    const observed = table.flat();
    const rowTotals = table.map((row) => row.reduce((a, b) => a + b, 0));
    const colTotals = [0, 1, 2, 3].map((c) => table.reduce((a, row) => a + (row[c] ?? 0), 0));
    const expected = observed.map((_, i) => ((rowTotals[Math.floor(i / 4)] ?? 0) * (colTotals[i % 4] ?? 0)) / UNITS);
    expect(chiSquared(observed, expected)).toBeLessThan(CHI2_CRITICAL_P001[9] ?? 0);

    // Pearson r of the raw buckets; its standard error under independence is 1/sqrt(n) ~ 0.0032,
    // so 0.0126 is a four-sigma bound.
    const cov = sumXY / UNITS - (sumX / UNITS) * (sumY / UNITS);
    const r = cov / Math.sqrt((sumXX / UNITS - (sumX / UNITS) ** 2) * (sumYY / UNITS - (sumY / UNITS) ** 2));
    expect(Math.abs(r)).toBeLessThan(4 / Math.sqrt(UNITS));
  });

  it('rejects weights the service should have refused', () => {
    expect(() => chooseVariant('e', 'u', variants([50, 49]))).toThrow(/sum to 99/);
    expect(() => chooseVariant('e', 'u', variants([50.5, 49.5]))).toThrow(/integer/);
    expect(() => chooseVariant('e', 'u', variants([-10, 110]))).toThrow(/integer 0..100/);
    expect(() => chooseVariant('e', 'u', [])).toThrow(/at least one/);
    expect(() => assertValidWeights(variants([100]))).not.toThrow();
  });
});

describe('variantIndexForBucket', () => {
  it('uses half-open ranges: a bucket on a boundary goes to the next variant', () => {
    const weights = [34, 33, 33];
    expect(variantIndexForBucket(0, weights)).toBe(0);
    expect(variantIndexForBucket(3399, weights)).toBe(0);
    expect(variantIndexForBucket(3400, weights)).toBe(1);
    expect(variantIndexForBucket(6699, weights)).toBe(1);
    expect(variantIndexForBucket(6700, weights)).toBe(2);
    expect(variantIndexForBucket(9999, weights)).toBe(2);
  });

  // Agreement with the GrowthBook SDK itself, boundary buckets included: bucketing-growthbook.test.ts.
});

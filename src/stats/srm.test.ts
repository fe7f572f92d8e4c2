import { describe, expect, it } from 'vitest';
import { sampleRatioMismatch } from './srm.js';

describe('sampleRatioMismatch', () => {
  it('matches the SRM calculator: [1001000, 999000] at 50/50 -> p 0.1573', () => {
    // Source: lukasvermeer/srm computeSRM.test.js. chi2 = 2 with 1 df; p = 0.15729920705028105
    // (scipy.stats.chi2.sf(2, 1), independent check of the extra digits).
    const result = sampleRatioMismatch([1_001_000, 999_000], [50, 50]);
    expect(result.chiSquared).toBeCloseTo(2, 10);
    expect(Math.abs((result.pValue as number) - 0.1573)).toBeLessThan(1e-4);
    expect(Math.abs((result.pValue as number) - 0.15729920705028105)).toBeLessThan(1e-10);
    expect(result.warning).toBe(false);
  });

  it('matches the SRM calculator: [500, 500] -> p 1', () => {
    // Source: lukasvermeer/srm computeSRM.test.js.
    expect(sampleRatioMismatch([500, 500], [1, 1]).pValue).toBe(1);
  });

  it('warns below p = 0.001 and compares against unequal weights', () => {
    // 5300 vs 4700 at 50/50: chi2 = 36, p ~ 2e-9.
    expect(sampleRatioMismatch([5300, 4700], [50, 50]).warning).toBe(true);
    // Exactly on a 20/30/50 split: no mismatch.
    expect(sampleRatioMismatch([2000, 3000, 5000], [20, 30, 50])).toMatchObject({ chiSquared: 0, pValue: 1 });
  });

  it('skips zero-weight arms and uses k - 1 degrees of freedom over the remaining ones', () => {
    const withHoldout = sampleRatioMismatch([1_001_000, 999_000, 37], [50, 50, 0]);
    expect(withHoldout.degreesOfFreedom).toBe(1);
    expect(Math.abs((withHoldout.pValue as number) - 0.1573)).toBeLessThan(1e-4);
  });

  it('returns p = null for degenerate inputs: no units, or fewer than two weighted arms', () => {
    expect(sampleRatioMismatch([0, 0], [50, 50])).toEqual({ chiSquared: null, degreesOfFreedom: 1, pValue: null, warning: false });
    expect(sampleRatioMismatch([120], [100]).pValue).toBeNull();
    expect(sampleRatioMismatch([120, 30], [100, 0]).pValue).toBeNull();
    expect(sampleRatioMismatch([], []).pValue).toBeNull();
  });

  it('rejects mismatched lengths and negative inputs', () => {
    expect(() => sampleRatioMismatch([1, 2], [1])).toThrow(RangeError);
    expect(() => sampleRatioMismatch([-1, 2], [1, 1])).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { adjustPValues, bonferroniInterval, bonferroniZ, familySize } from './multiple-testing.js';

function expectClose(actual: readonly (number | null)[], expected: readonly (number | null)[]) {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, index) => {
    const want = expected[index];
    if (want === null || want === undefined) expect(value).toBeNull();
    else expect(Math.abs((value as number) - want)).toBeLessThan(1e-12);
  });
}

// Reference values: SciPy 1.17.1 `scipy.stats.false_discovery_control(ps, method="bh")`, and
// statsmodels 0.13.5 (Debian's python3-statsmodels) `multipletests(ps, method="fdr_bh")[1]` and
// `multipletests(ps, method="holm")[1]`; both BH sources agree to 1e-16. Reproduce with
//   /usr/bin/python3 -c 'from statsmodels.stats.multitest import multipletests as t; print(t([0.01,0.04,0.03,0.005,0.2], method="holm")[1])'
describe('adjustPValues', () => {
  const unsorted = [0.01, 0.04, 0.03, 0.005, 0.2];
  const ten = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216];

  it('Benjamini-Hochberg matches scipy false_discovery_control and statsmodels fdr_bh', () => {
    expectClose(adjustPValues(unsorted, 'benjamini_hochberg'), [0.025, 0.05, 0.05, 0.025, 0.2]);
    expectClose(adjustPValues([0.02, 0.02, 0.04, 0.9], 'benjamini_hochberg'), [0.04, 0.04, 0.05333333333333333, 0.9]);
    // Benjamini & Hochberg's own example family of 10 (as in scipy's documentation style).
    expectClose(adjustPValues(ten, 'benjamini_hochberg'), [0.01, 0.04, 0.084, 0.084, 0.084, 0.1, 0.1057142857142857, 0.216, 0.216, 0.216]);
  });

  it('Holm matches statsmodels multipletests(method="holm")', () => {
    expectClose(adjustPValues(unsorted, 'holm'), [0.04, 0.09, 0.09, 0.025, 0.2]);
    expectClose(adjustPValues([0.02, 0.02, 0.04, 0.9], 'holm'), [0.08, 0.08, 0.08, 0.9]);
    expectClose(adjustPValues(ten, 'holm'), [0.01, 0.072, 0.312, 0.312, 0.312, 0.312, 0.312, 0.615, 0.615, 0.615]);
  });

  it('a family of one is left as it is by every method', () => {
    for (const method of ['none', 'holm', 'benjamini_hochberg'] as const) expectClose(adjustPValues([0.5], method), [0.5]);
  });

  it('none returns the raw p-values', () => {
    expectClose(adjustPValues(unsorted, 'none'), unsorted);
  });

  it('leaves null p-values out of the family and null', () => {
    // Same as the 5-value family with two undefined effects between: m stays 5.
    const withGaps = [0.01, null, 0.04, 0.03, null, 0.005, 0.2];
    expectClose(adjustPValues(withGaps, 'holm'), [0.04, null, 0.09, 0.09, null, 0.025, 0.2]);
    expect(familySize(withGaps)).toBe(5);
  });

  it('caps at 1', () => {
    expectClose(adjustPValues([0.6, 0.7, 0.8], 'holm'), [1, 1, 1]);
    expectClose(adjustPValues([0.9, 0.95], 'benjamini_hochberg'), [0.95, 0.95]);
  });
});

// Reference values: scipy.stats.norm.ppf(1 - 0.05 / (2 m)), SciPy 1.17.1.
describe('bonferroniInterval', () => {
  it('uses the normal quantile of 1 - alpha / 2m', () => {
    expect(Math.abs(bonferroniZ(1) - 1.959963984540054)).toBeLessThan(1e-9);
    expect(Math.abs(bonferroniZ(2) - 2.241402727604947)).toBeLessThan(1e-9);
    expect(Math.abs(bonferroniZ(4) - 2.497705474412374)).toBeLessThan(1e-9);
    expect(() => bonferroniZ(0)).toThrow(RangeError);
  });

  it('widens each side of a 95% interval by z_(1 - alpha/2m) / z_0.975, keeping asymmetry', () => {
    const [low, high] = bonferroniInterval(0.1, [0.0, 0.3], 4);
    const scale = 2.497705474412374 / 1.959963984540054;
    expect(Math.abs(low - (0.1 - 0.1 * scale))).toBeLessThan(1e-9);
    expect(Math.abs(high - (0.1 + 0.2 * scale))).toBeLessThan(1e-9);
    // A family of one keeps the 95% interval.
    const [one, two] = bonferroniInterval(0.1, [0.0, 0.3], 1);
    expect(Math.abs(one)).toBeLessThan(1e-12);
    expect(Math.abs(two - 0.3)).toBeLessThan(1e-12);
  });
});

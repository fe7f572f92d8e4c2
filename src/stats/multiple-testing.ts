/**
 * Adjusted p-values for a family of tests read at once (docs/statistics.md "Multiple testing").
 *
 * - Benjamini-Hochberg (1995) controls the false discovery rate (the expected share of false
 *   findings among the rejected) under independence or positive dependence. Adjusted values, as
 *   `scipy.stats.false_discovery_control(ps, method="bh")` and statsmodels'
 *   `multipletests(ps, method="fdr_bh")` compute them: sort ascending, p_(i) m / i, then the
 *   running minimum from the largest down, capped at 1.
 * - Holm (1979) controls the family-wise error rate (the chance of any false rejection) under any
 *   dependence. Adjusted values as statsmodels' `multipletests(ps, method="holm")`: sort
 *   ascending, (m - i + 1) p_(i), then the running maximum from the smallest up, capped at 1.
 *   Holm defines no interval of its own; the Bonferroni interval (level 1 - alpha / m) is the one
 *   consistent with it, so that is the adjusted interval reported beside Holm's p-values.
 * - `none`: the p-values unchanged.
 *
 * Null p-values (no effect defined) are left out of the family and stay null.
 */
import normalDist from '@stdlib/stats-base-dists-normal';
import { Z_975 } from './normal.js';
import type { Interval } from './types.js';

export const MULTIPLE_TESTING_METHODS = ['none', 'holm', 'benjamini_hochberg'] as const;
export type MultipleTestingMethod = (typeof MULTIPLE_TESTING_METHODS)[number];

/** The significance level adjusted values are read against (two-sided). */
export const FAMILY_ALPHA = 0.05;

/** Adjusted p-values in the order given; null stays null and is not counted in the family. */
export function adjustPValues(pValues: readonly (number | null)[], method: MultipleTestingMethod): (number | null)[] {
  const tested = pValues.flatMap((p, index) => (p === null || !Number.isFinite(p) ? [] : [{ p, index }])).sort((a, b) => a.p - b.p);
  const adjusted: (number | null)[] = pValues.map(() => null);
  const m = tested.length;
  if (method === 'none') {
    for (const { p, index } of tested) adjusted[index] = p;
    return adjusted;
  }
  if (method === 'holm') {
    let running = 0;
    tested.forEach(({ p, index }, rank) => {
      running = Math.max(running, Math.min(1, (m - rank) * p));
      adjusted[index] = running;
    });
    return adjusted;
  }
  let running = 1;
  for (let rank = m - 1; rank >= 0; rank -= 1) {
    const { p, index } = tested[rank] as { p: number; index: number };
    running = Math.min(running, (m * p) / (rank + 1));
    adjusted[index] = Math.min(1, running);
  }
  return adjusted;
}

/** The number of tests in the family: the non-null p-values. */
export function familySize(pValues: readonly (number | null)[]): number {
  return pValues.filter((p) => p !== null && Number.isFinite(p)).length;
}

/** The two-sided normal quantile of the Bonferroni level 1 - alpha / m: Φ⁻¹(1 - alpha / (2m)). */
export function bonferroniZ(m: number, alpha: number = FAMILY_ALPHA): number {
  if (!Number.isInteger(m) || m < 1) throw new RangeError(`the family size must be a positive integer, got ${m}`);
  return normalDist.quantile(1 - alpha / (2 * m), 0, 1);
}

/**
 * A 95% interval widened to the Bonferroni level of a family of m: each side's distance from the
 * mean scaled by z_(1 - alpha / 2m) / z_0.975. Exact for a normal posterior (every metric but the
 * binary one); for a binary metric's exact Beta interval it keeps its asymmetry and is the normal
 * approximation of the wider quantiles.
 */
export function bonferroniInterval(mean: number, interval: Interval, m: number, alpha: number = FAMILY_ALPHA): Interval {
  const scale = bonferroniZ(m, alpha) / Z_975;
  return [mean - (mean - interval[0]) * scale, mean + (interval[1] - mean) * scale];
}

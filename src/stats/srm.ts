/**
 * Sample-ratio mismatch (docs/statistics.md "3. Sample-ratio mismatch"; GrowthBook `check_srm`):
 * chi2 = sum (o_i - e_i)^2 / e_i with e_i = w_i / sum(w) * N over arms with a positive weight,
 * p = P(Chi2_{k-1} > chi2), warning when p < 0.001.
 */
import chisquare from '@stdlib/stats-base-dists-chisquare';

export const SRM_WARNING_P = 0.001;

export interface SrmResult {
  chiSquared: number | null;
  degreesOfFreedom: number;
  /** null when the test is undefined: fewer than two weighted arms, or no units in them. */
  pValue: number | null;
  warning: boolean;
}

function assertSrmInputs(observedUnits: readonly number[], weights: readonly number[]): void {
  if (observedUnits.length !== weights.length) {
    throw new RangeError(`observedUnits (${observedUnits.length}) and weights (${weights.length}) differ in length`);
  }
  for (const [index, units] of observedUnits.entries()) {
    const weight = weights[index] as number;
    if (!(units >= 0 && Number.isFinite(units) && weight >= 0 && Number.isFinite(weight))) {
      throw new RangeError(`arm ${index}: units and weight must be finite and >= 0`);
    }
  }
}

/**
 * Pearson chi-squared test of observed units per arm against the configured weights.
 * Zero-weight arms are skipped (GrowthBook): they are expected to receive nothing, and their
 * expected count of 0 would divide by zero. The survival function is 1 - CDF; the absolute error
 * of that subtraction (~1e-16) is irrelevant next to the 0.001 threshold.
 */
export function sampleRatioMismatch(observedUnits: readonly number[], weights: readonly number[]): SrmResult {
  assertSrmInputs(observedUnits, weights);
  const included = observedUnits.map((units, index) => ({ units, weight: weights[index] as number })).filter((arm) => arm.weight > 0);
  const degreesOfFreedom = Math.max(included.length - 1, 0);
  const totalUnits = included.reduce((sum, arm) => sum + arm.units, 0);
  const totalWeight = included.reduce((sum, arm) => sum + arm.weight, 0);
  if (included.length < 2 || totalUnits === 0) {
    return { chiSquared: null, degreesOfFreedom, pValue: null, warning: false };
  }
  const chiSquared = included.reduce((sum, arm) => {
    const expected = (arm.weight / totalWeight) * totalUnits;
    return sum + ((arm.units - expected) * (arm.units - expected)) / expected;
  }, 0);
  const pValue = Math.min(1, Math.max(0, 1 - chisquare.cdf(chiSquared, degreesOfFreedom)));
  return { chiSquared, degreesOfFreedom, pValue, warning: pValue < SRM_WARNING_P };
}

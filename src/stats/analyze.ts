/**
 * One metric's per-variant analysis in the spec's VariantPosterior field names: posterior mean and
 * 95% interval, prob_best and expected_loss_if_stop_now, plus the per-unit moments the decision
 * rules need. Pass only the variants that take traffic: a variant with no units keeps its prior,
 * and a flat Beta(1, 1) prior can look like a likely "best" next to arms with low rates.
 */
import { betaPosterior } from './beta.js';
import { compareBetaPosteriors, compareNormalPosteriors } from './compare.js';
import { bernoulliMoments, normalMeanPosterior } from './normal.js';
import type { MonteCarloOptions, NormalParams, VariantAnalysis } from './types.js';

export interface BinaryArmCounts {
  variant_key: string;
  is_control: boolean;
  units: number;
  conversions: number;
}

export interface NumericArmSums {
  variant_key: string;
  is_control: boolean;
  units: number;
  /** Sum over units of each unit's metric value. */
  sum: number;
  /** Sum over units of the squared metric value. */
  sum_of_squares: number;
}

/** Binary metric: Beta(1 + conversions, 1 + units - conversions) per variant. */
export function analyzeBinaryMetric(arms: readonly BinaryArmCounts[], options: MonteCarloOptions = {}): VariantAnalysis[] {
  const posteriors = arms.map((arm) => betaPosterior(arm.conversions, arm.units));
  const comparison = compareBetaPosteriors(posteriors, options);
  return arms.map((arm, index) => {
    const posterior = posteriors[index] as (typeof posteriors)[number];
    const moments = bernoulliMoments(arm.units, arm.conversions);
    return {
      variant_key: arm.variant_key,
      is_control: arm.is_control,
      sample_size: arm.units,
      conversions: arm.conversions,
      observed_rate: moments.mean,
      unit_variance: moments.variance,
      posterior: { mean: posterior.mean, credible_interval_95: posterior.credibleInterval95 },
      prob_best: comparison.probBest[index] ?? null,
      expected_loss_if_stop_now: comparison.expectedLoss[index] ?? null,
    };
  });
}

/**
 * Count, revenue and duration metrics: normal posterior of the per-unit mean. prob_best and the
 * loss are null while any variant has fewer than 2 units (no variance estimate yet).
 */
export function analyzeNumericMetric(arms: readonly NumericArmSums[], options: MonteCarloOptions = {}): VariantAnalysis[] {
  const posteriors = arms.map((arm) =>
    normalMeanPosterior({ n: arm.units, sum: arm.sum, sumOfSquares: arm.sum_of_squares }),
  );
  const comparable = posteriors.every((posterior) => posterior.varianceOfMean !== null);
  const comparison = comparable
    ? compareNormalPosteriors(
        posteriors.map((posterior): NormalParams => ({ mean: posterior.mean, variance: posterior.varianceOfMean ?? 0 })),
        options,
      )
    : null;
  return arms.map((arm, index) => {
    const posterior = posteriors[index] as (typeof posteriors)[number];
    return {
      variant_key: arm.variant_key,
      is_control: arm.is_control,
      sample_size: arm.units,
      observed_rate: posterior.mean,
      unit_variance: posterior.unitVariance ?? 0,
      posterior: { mean: posterior.mean, credible_interval_95: posterior.credibleInterval95 },
      prob_best: comparison?.probBest[index] ?? null,
      expected_loss_if_stop_now: comparison?.expectedLoss[index] ?? null,
    };
  });
}

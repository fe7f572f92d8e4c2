/**
 * One metric's per-variant analysis in the spec's VariantPosterior field names: posterior mean and
 * 95% interval, prob_best and expected_loss_if_stop_now, the effect against the control, plus the
 * per-unit moments the decision rules need. Pass only the variants that take traffic: a variant
 * with no units keeps its prior, and a flat Beta(1, 1) prior can look like a likely "best" next to
 * arms with low rates.
 *
 * Direction (docs/metrics.md "Direction"): with `higherIsBetter` false, "best" is the lowest value.
 * prob_best and the loss then compare the mirrored quantities (1 - p ~ Beta(b, a) for a rate, -x
 * for a normal mean), which gives P(lowest) and E[max(this - lowest other, 0)] on the same scale.
 */
import { betaPosterior } from './beta.js';
import { compareBetaPosteriors, compareNormalPosteriors } from './compare.js';
import { binaryEffect, normalEffect } from './effect.js';
import { bernoulliMoments, normalMeanPosterior, Z_975 } from './normal.js';
import type { BetaParams, MonteCarloOptions, NormalParams, VariantAnalysis } from './types.js';

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

/** A variant whose estimate has a normal posterior (numeric and ratio metrics). */
export interface NormalArm {
  variant_key: string;
  is_control: boolean;
  sample_size: number;
  mean: number;
  /** Per-unit variance (the decision rules' input); null when undefined. */
  unit_variance: number | null;
  /** Posterior variance of the estimate; null when undefined (fewer than 2 units). */
  variance_of_mean: number | null;
}

export interface AnalysisOptions extends MonteCarloOptions {
  /** The metric's direction; default true. */
  higherIsBetter?: boolean;
}

function controlIndex(arms: readonly { is_control: boolean }[]): number {
  const index = arms.findIndex((arm) => arm.is_control);
  return index >= 0 ? index : 0;
}

/** Binary metric: Beta(1 + conversions, 1 + units - conversions) per variant. */
export function analyzeBinaryMetric(arms: readonly BinaryArmCounts[], options: AnalysisOptions = {}): VariantAnalysis[] {
  const higherIsBetter = options.higherIsBetter ?? true;
  const posteriors = arms.map((arm) => betaPosterior(arm.conversions, arm.units));
  const compared = higherIsBetter ? posteriors : posteriors.map((p): BetaParams => ({ alpha: p.beta, beta: p.alpha }));
  const comparison = compareBetaPosteriors(compared, options);
  const control = posteriors[controlIndex(arms)];
  return arms.map((arm, index) => {
    const posterior = posteriors[index] as (typeof posteriors)[number];
    const moments = bernoulliMoments(arm.units, arm.conversions);
    const isControl = index === controlIndex(arms);
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
      effect: isControl || control === undefined ? null : binaryEffect(control, posterior, higherIsBetter),
    };
  });
}

/**
 * Normal posteriors N(mean, variance_of_mean) per variant. prob_best, the loss and the effect are
 * null while any variant's variance is undefined (fewer than 2 units: no variance estimate yet).
 */
export function analyzeNormalArms(arms: readonly NormalArm[], options: AnalysisOptions = {}): VariantAnalysis[] {
  const higherIsBetter = options.higherIsBetter ?? true;
  const comparable = arms.every((arm) => arm.variance_of_mean !== null);
  const params = arms.map((arm): NormalParams => ({ mean: arm.mean, variance: arm.variance_of_mean ?? 0 }));
  const compared = higherIsBetter ? params : params.map((p) => ({ mean: -p.mean, variance: p.variance }));
  const comparison = comparable ? compareNormalPosteriors(compared, options) : null;
  const control = params[controlIndex(arms)];
  return arms.map((arm, index) => {
    const own = params[index] as NormalParams;
    const half = arm.variance_of_mean === null ? null : Z_975 * Math.sqrt(arm.variance_of_mean);
    const isControl = index === controlIndex(arms);
    return {
      variant_key: arm.variant_key,
      is_control: arm.is_control,
      sample_size: arm.sample_size,
      observed_rate: arm.mean,
      unit_variance: arm.unit_variance ?? 0,
      posterior: { mean: arm.mean, credible_interval_95: half === null ? null : [arm.mean - half, arm.mean + half] },
      prob_best: comparison?.probBest[index] ?? null,
      expected_loss_if_stop_now: comparison?.expectedLoss[index] ?? null,
      effect: isControl || !comparable || control === undefined ? null : normalEffect(control, own, higherIsBetter),
    };
  });
}

/** Count, revenue and duration metrics: normal posterior of the per-unit mean. */
export function analyzeNumericMetric(arms: readonly NumericArmSums[], options: AnalysisOptions = {}): VariantAnalysis[] {
  return analyzeNormalArms(
    arms.map((arm) => {
      const posterior = normalMeanPosterior({ n: arm.units, sum: arm.sum, sumOfSquares: arm.sum_of_squares });
      return {
        variant_key: arm.variant_key,
        is_control: arm.is_control,
        sample_size: arm.units,
        mean: posterior.mean,
        unit_variance: posterior.unitVariance,
        variance_of_mean: posterior.varianceOfMean,
      };
    }),
    options,
  );
}

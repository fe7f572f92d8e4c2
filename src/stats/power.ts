/**
 * How many units per variant a decision rule needs to detect an effect the size of its minimum
 * detectable effect (MDE), with a given power, at one look. Planning approximations, documented in
 * docs/statistics.md section 9 and checked against the seeded simulation of
 * scripts/power-simulation.ts:
 *
 * - at n units per arm the difference of means has variance V = (sigma_c^2 + sigma_t^2) / n and
 *   its z-score is normal with mean mu(n) = delta / sqrt(V), delta = mde |mean|; for a binary
 *   metric sigma_t^2 = p_t (1 - p_t) at p_t = p (1 + mde), otherwise sigma_t^2 = sigma_c^2;
 * - a rule declares the treatment a winner at n when z exceeds a critical value c(n), so
 *   power(n) = Phi(mu(n) - c(n)) (the far tail, a winner in the wrong direction, is negligible);
 * - one look at n: a team that watches every snapshot of an always-valid rule gets there sooner.
 */
import normalDist from '@stdlib/stats-base-dists-normal';
import { gaussianMixtureRhoSquared, normalMixtureBoundary } from './sequential.js';
import type { DecisionRuleSettings } from './types.js';

export interface PlanningBaseline {
  /** Per-unit mean of the control: the conversion rate for a binary metric. */
  mean: number;
  /** Per-unit variance of the control: p (1 - p) for a binary metric. */
  variance: number;
  /** Per-unit variance of a treatment showing the MDE; the control's unless given. */
  treatmentVariance?: number;
}

/**
 * Relative weights of the control and of each treatment (the experiment's variant weights). The
 * units of the smallest arm are the question's "units per variant"; the other arms hold units in
 * proportion to their weights. Equal weights unless given.
 */
export interface Allocation {
  control: number;
  treatments: readonly number[];
}

export interface PowerQuestion {
  rule: DecisionRuleSettings;
  /** Variants of the experiment, control included; the always-valid rules split alpha over the treatments. */
  variantCount: number;
  baseline: PlanningBaseline;
  /** Probability of declaring the MDE-sized lift a winner; 0.8 unless given. */
  power?: number;
  allocation?: Allocation;
}

export const DEFAULT_POWER = 0.8;

/** The critical |z| of the rule with `totalN` units in the two arms compared (n > 0), for alpha already split. */
function criticalZ(rule: DecisionRuleSettings, alpha: number, totalN: number, varianceOfDelta: number, effect: number): number {
  if (rule.method === 'bayesian.posterior_threshold') {
    // Two flat-prior arms: prob_best of the treatment is about Phi(z), so it reaches t when z >= Phi^-1(t).
    return normalDist.quantile(rule.posterior_threshold, 0, 1);
  }
  if (rule.method === 'bayesian.always_valid_evalue') {
    const rhoSquared = gaussianMixtureRhoSquared(alpha, 2 * rule.min_sample_per_variant);
    return normalMixtureBoundary(totalN, rhoSquared, alpha) / Math.sqrt(totalN);
  }
  // mSPRT with tau = the MDE on the difference scale: ln Lambda >= ln(1/alpha) when
  // z^2 >= 2 (1 + r) / r (ln(1/alpha) + ln(1 + r) / 2), r = tau^2 / V.
  const r = (effect * effect) / varianceOfDelta;
  return Math.sqrt(((2 * (1 + r)) / r) * (-Math.log(alpha) + 0.5 * Math.log1p(r)));
}

/** The power of one comparison with `controlUnits` and `treatmentUnits` units, for a true lift of the MDE. */
function comparisonPower(question: PowerQuestion, alpha: number, controlUnits: number, treatmentUnits: number): number {
  const { rule, baseline } = question;
  const effect = rule.minimum_detectable_effect * Math.abs(baseline.mean);
  const varianceOfDelta = baseline.variance / controlUnits + (baseline.treatmentVariance ?? baseline.variance) / treatmentUnits;
  const meanZ = effect / Math.sqrt(varianceOfDelta);
  return normalDist.cdf(meanZ - criticalZ(rule, alpha, controlUnits + treatmentUnits, varianceOfDelta, effect), 0, 1);
}

/**
 * Approximate power of the rule at one look with `unitsPerArm` units in the smallest arm (in every
 * arm with equal weights), for a true lift of the MDE in each treatment: the power of the
 * comparison that has the least, so that every treatment showing the MDE is likely detected.
 */
export function powerAtUnits(question: PowerQuestion, unitsPerArm: number): number {
  const { rule, baseline } = question;
  const effect = rule.minimum_detectable_effect * Math.abs(baseline.mean);
  if (!(unitsPerArm > 0) || !(effect > 0) || !(baseline.variance > 0)) return 0;
  const alpha = (1 - rule.posterior_threshold) / Math.max(question.variantCount - 1, 1);
  const allocation = question.allocation;
  if (!allocation) return comparisonPower(question, alpha, unitsPerArm, unitsPerArm);
  const smallest = Math.min(allocation.control, ...allocation.treatments);
  const unitsAt = (weight: number) => (unitsPerArm * weight) / smallest;
  const powers = allocation.treatments.map((weight) => comparisonPower(question, alpha, unitsAt(allocation.control), unitsAt(weight)));
  return Math.min(...powers);
}

/** No estimate above this: a billion units per variant is "never" for any experiment. */
const MAX_UNITS = 1e9;

/**
 * The fewest units per variant at which `powerAtUnits` reaches the target power, rounded up; null
 * when the baseline gives no effect to detect (mean or variance 0) or it would take more than a
 * billion. Doubling then bisection: power(n) rises with n past the first few units (the critical
 * values shrink or grow like sqrt(log n) while mu grows like sqrt(n)).
 */
export function estimateUnitsPerVariant(question: PowerQuestion): number | null {
  const target = question.power ?? DEFAULT_POWER;
  const reaches = (units: number) => powerAtUnits(question, units) >= target;
  let high = 1;
  while (!reaches(high)) {
    high *= 2;
    if (high > MAX_UNITS) return null;
  }
  let low = high / 2;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (reaches(middle)) high = middle;
    else low = middle;
  }
  return Math.ceil(high);
}

/**
 * A binary metric converting at `rate` in the control and at rate (1 + lift) in a treatment:
 * per-unit variances p (1 - p) of each.
 */
export function binaryBaseline(rate: number, relativeLift = 0): PlanningBaseline {
  const treatmentRate = Math.min(rate * (1 + relativeLift), 1);
  return { mean: rate, variance: rate * (1 - rate), treatmentVariance: treatmentRate * (1 - treatmentRate) };
}

/** A metric's baseline as history or a person gives it: per-unit mean and variance, and whether it is a conversion rate. */
export interface MetricBaseline {
  mean: number;
  variance: number;
  /** A binary metric: a treatment converting at p (1 + MDE) has variance p (1 + MDE) (1 - p (1 + MDE)). */
  binary: boolean;
}

/** The planning baseline of a metric for a lift of `relativeLift`: binary metrics as binaryBaseline, others with equal variances. */
export function baselineForLift(metric: MetricBaseline, relativeLift: number): PlanningBaseline {
  return metric.binary ? binaryBaseline(metric.mean, relativeLift) : { mean: metric.mean, variance: metric.variance };
}

/** No MDE above this: a lift of 10,000% is "not detectable" at any sample worth planning. */
const MAX_MDE = 100;

/**
 * The smallest relative MDE the rule detects with the target power at `unitsPerArm` units in the
 * smallest arm, the rule's minimum_detectable_effect set to it (the mSPRT's mixture is tuned to
 * its MDE); null when no MDE up to 10,000% is reached or the baseline gives nothing to detect.
 * Bisection on the log scale: power rises with the MDE at a fixed sample.
 */
export function reachableMde(question: Omit<PowerQuestion, 'baseline'>, metric: MetricBaseline, unitsPerArm: number): number | null {
  const target = question.power ?? DEFAULT_POWER;
  const reaches = (mde: number) =>
    powerAtUnits({ ...question, rule: { ...question.rule, minimum_detectable_effect: mde }, baseline: baselineForLift(metric, mde) }, unitsPerArm) >= target;
  if (!(unitsPerArm > 0) || !reaches(MAX_MDE)) return null;
  let low = Math.log(1e-9);
  let high = Math.log(MAX_MDE);
  for (let step = 0; step < 60; step++) {
    const middle = (low + high) / 2;
    if (reaches(Math.exp(middle))) high = middle;
    else low = middle;
  }
  return Math.exp(high);
}

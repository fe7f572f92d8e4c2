/**
 * Shared types of the statistics library.
 *
 * Naming: the low-level math functions use camelCase. The analysis and decision boundary
 * (`VariantAnalysis`, `DecisionRuleSettings`, `Decision`) mirrors the JSON field names of the
 * interface spec (AnalysisSnapshot, VariantPosterior, DecisionRule), so callers can copy values
 * into a snapshot without renaming.
 */

import type { Effect } from './effect.js';

/** Shape parameters of a Beta distribution. */
export interface BetaParams {
  alpha: number;
  beta: number;
}

/** A normal distribution given by its mean and variance. */
export interface NormalParams {
  mean: number;
  variance: number;
}

/** Closed interval [lower, upper]. */
export type Interval = [number, number];

/** prob_best and expected loss of every arm, in the order the arms were given. */
export interface Comparison {
  probBest: number[];
  expectedLoss: number[];
  /** `exact` for closed forms, `monte_carlo` for the seeded simulation. */
  method: 'exact' | 'monte_carlo';
}

/** Options of the seeded Monte Carlo; defaults give at least 100,000 draws and a fixed seed. */
export interface MonteCarloOptions {
  draws?: number;
  seed?: number;
}

/**
 * Per-unit moments of one arm: the inputs of the sequential tests.
 * `variance` is the per-unit variance (p(1-p) for a Bernoulli metric), not the variance of the mean.
 */
export interface ArmMoments {
  n: number;
  mean: number;
  variance: number;
}

export type DecisionMethod = 'bayesian.posterior_threshold' | 'bayesian.always_valid_evalue' | 'frequentist.sequential_msprt';

/** The spec's DecisionRule with every default resolved. */
export interface DecisionRuleSettings {
  method: DecisionMethod;
  posterior_threshold: number;
  /** Relative to the control mean: 0.02 means a 2% lift (see docs/statistics.md). */
  minimum_detectable_effect: number;
  min_sample_per_variant: number;
  max_duration_days: number;
  snapshot_cadence_minutes: number;
}

/** What the decision needs to know about one variant (a subset of `VariantAnalysis`). */
export interface DecisionVariant {
  variant_key: string;
  is_control: boolean;
  sample_size: number;
  /** Observed per-unit mean: the conversion rate for binary metrics. */
  observed_rate: number;
  /** Per-unit variance: p(1-p) for binary metrics, the sample variance otherwise. */
  unit_variance: number;
  prob_best: number | null;
}

export type Verdict = 'keep_running' | 'winner' | 'no_difference' | 'max_duration_reached';

export interface Decision {
  /** The spec's `decision_rule_satisfied`: the rule found a winner. */
  satisfied: boolean;
  verdict: Verdict;
  variant_key: string | null;
  reason: string;
}

/** One variant of a metric's analysis, in the spec's VariantPosterior field names. */
export interface VariantAnalysis extends DecisionVariant {
  /** Present for binary metrics only. */
  conversions?: number;
  posterior: {
    mean: number;
    /** null when the posterior is not defined (a numeric metric with fewer than 2 units). */
    credible_interval_95: Interval | null;
  };
  expected_loss_if_stop_now: number | null;
  /** Against the control (docs/statistics.md "2a. Effect against the control"); null on the control and while undefined. */
  effect: Effect | null;
}

/**
 * The three decision rules (docs/statistics.md "5. Decision rules"), evaluated on per-variant summaries.
 *
 * - `bayesian.posterior_threshold`: satisfied when every variant has at least
 *   min_sample_per_variant units and some variant's prob_best reaches posterior_threshold.
 * - `bayesian.always_valid_evalue`: satisfied when the Gaussian-mixture e-value of some treatment
 *   against control reaches 1/alpha, alpha = 1 - posterior_threshold.
 * - `frequentist.sequential_msprt`: the same with Johari et al.'s mixture likelihood ratio.
 *
 * `satisfied` is the spec's decision_rule_satisfied (the rule found a winner). The verdict adds the
 * words a person acts on: `no_difference` when the data rule out an effect as large as the minimum
 * detectable effect, `max_duration_reached` when time is up without either.
 */
import normalDist from '@stdlib/stats-base-dists-normal';
import { bernoulliMoments } from './normal.js';
import { gaussianMixtureTest, msprtMixingVariance, msprtTest, runningMinimumPValue } from './sequential.js';
import type { SequentialTestResult } from './sequential.js';
import { chanceText, daysText, unitsText } from './rule-words.js';
import type { ArmMoments, Decision, DecisionRuleSettings, DecisionVariant } from './types.js';

/** The spec's DecisionRule defaults (docs/statistics.md "5. Decision rules"). */
export const DEFAULT_DECISION_RULE: DecisionRuleSettings = {
  method: 'bayesian.posterior_threshold',
  posterior_threshold: 0.995,
  minimum_detectable_effect: 0.02,
  min_sample_per_variant: 20_000,
  max_duration_days: 28,
  snapshot_cadence_minutes: 240,
};

/** Fill the spec defaults into a stored (possibly partial) DecisionRule. */
export function resolveDecisionRule(rule?: Partial<DecisionRuleSettings> | null): DecisionRuleSettings {
  const given = rule ?? {};
  const defaults = DEFAULT_DECISION_RULE;
  return {
    method: given.method ?? defaults.method,
    posterior_threshold: given.posterior_threshold ?? defaults.posterior_threshold,
    minimum_detectable_effect: given.minimum_detectable_effect ?? defaults.minimum_detectable_effect,
    min_sample_per_variant: given.min_sample_per_variant ?? defaults.min_sample_per_variant,
    max_duration_days: given.max_duration_days ?? defaults.max_duration_days,
    snapshot_cadence_minutes: given.snapshot_cadence_minutes ?? defaults.snapshot_cadence_minutes,
  };
}

export interface DecisionInput {
  variants: readonly DecisionVariant[];
  rule: DecisionRuleSettings;
  days_elapsed: number;
  /** Always-valid p-values of earlier looks by treatment key, so a rejection stays a rejection. */
  previous_p_values?: Readonly<Record<string, number>>;
  /** The metric's direction (default true): false makes a lower value the better one. */
  higher_is_better?: boolean;
}

/** Always-valid evidence of one treatment against control. */
export interface TreatmentEvidence extends SequentialTestResult {
  variant_key: string;
  /** Running minimum of the always-valid p-value, including previous_p_values. */
  running_p_value: number;
  /** Per-comparison level after the Bonferroni split over the treatments. */
  alpha: number;
  significant: boolean;
}

type Outcome = { kind: 'winner'; variantKey: string; reason: string } | { kind: 'no_difference'; reason: string } | { kind: 'undecided'; reason: string };

function controlOf(variants: readonly DecisionVariant[]): DecisionVariant {
  const control = variants.find((variant) => variant.is_control) ?? variants[0];
  if (control === undefined) {
    throw new RangeError('decision needs at least one variant');
  }
  return control;
}

function momentsOf(variant: DecisionVariant): ArmMoments {
  return { n: variant.sample_size, mean: variant.observed_rate, variance: variant.unit_variance };
}

/** The MDE on the difference scale: it is relative to the control mean. */
function practicalMargin(rule: DecisionRuleSettings, control: DecisionVariant): number {
  return rule.minimum_detectable_effect * Math.abs(control.observed_rate);
}

/**
 * P(|delta| < margin) under the normal approximation delta ~ N(d, var_t / n_t + var_c / n_c).
 * Why an approximation: it is only reached once every arm has min_sample_per_variant units, where
 * the Beta and normal posteriors of a difference agree closely.
 */
function probWithinMargin(control: DecisionVariant, treatment: DecisionVariant, margin: number): number {
  const difference = treatment.observed_rate - control.observed_rate;
  const sd = Math.sqrt(treatment.unit_variance / Math.max(treatment.sample_size, 1) + control.unit_variance / Math.max(control.sample_size, 1));
  if (sd === 0) {
    return Math.abs(difference) < margin ? 1 : 0;
  }
  return normalDist.cdf((margin - difference) / sd, 0, 1) - normalDist.cdf((-margin - difference) / sd, 0, 1);
}

function posteriorThresholdOutcome(variants: readonly DecisionVariant[], rule: DecisionRuleSettings): Outcome {
  const threshold = rule.posterior_threshold;
  const short = variants.filter((variant) => variant.sample_size < rule.min_sample_per_variant);
  if (short.length > 0) {
    const keys = short.map((variant) => variant.variant_key).join(', ');
    const verb = short.length === 1 ? 'has' : 'have';
    return { kind: 'undecided', reason: `${keys} ${verb} fewer units than the minimum sample of ${unitsText(rule.min_sample_per_variant)} per variant` };
  }
  const leader = [...variants].sort((a, b) => (b.prob_best ?? -1) - (a.prob_best ?? -1))[0];
  if (leader === undefined || leader.prob_best === null || variants.some((variant) => variant.prob_best === null)) {
    return { kind: 'undecided', reason: 'the chance of being best is not known for every variant yet' };
  }
  if (leader.prob_best >= threshold) {
    const reason = `${leader.variant_key} has a ${chanceText(leader.prob_best)} chance of being best, at least the ${chanceText(threshold)} the rule asks for`;
    return { kind: 'winner', variantKey: leader.variant_key, reason };
  }
  const control = controlOf(variants);
  const margin = practicalMargin(rule, control);
  const treatments = variants.filter((variant) => variant !== control);
  if (margin > 0 && treatments.every((treatment) => probWithinMargin(control, treatment, margin) >= threshold)) {
    const reason = `with at least ${chanceText(threshold)} certainty, every variant is within ${margin.toPrecision(3)} of the control (the minimum detectable effect)`;
    return { kind: 'no_difference', reason };
  }
  const reason = `the best chance of being best is ${leader.variant_key}'s ${chanceText(leader.prob_best)}, short of the ${chanceText(threshold)} the rule asks for`;
  return { kind: 'undecided', reason };
}

/**
 * Always-valid tests of each treatment against control. Why Bonferroni: with k - 1 treatments each
 * tested at alpha / (k - 1), the chance that any of them ever falsely rejects stays <= alpha.
 * Why N* = 2 min_sample_per_variant for the e-value: it is the total sample of one comparison at
 * the size the team planned to read the experiment at, where the boundary is then tightest.
 */
export function sequentialEvidence(input: Omit<DecisionInput, 'days_elapsed'>): TreatmentEvidence[] {
  const { variants, rule } = input;
  const control = controlOf(variants);
  const treatments = variants.filter((variant) => variant !== control);
  const alpha = (1 - rule.posterior_threshold) / Math.max(treatments.length, 1);
  return treatments.map((treatment) => {
    const result =
      rule.method === 'frequentist.sequential_msprt'
        ? msprtTest(momentsOf(control), momentsOf(treatment), {
            alpha,
            mixingVariance: msprtMixingVariance(rule.minimum_detectable_effect, control.observed_rate),
          })
        : gaussianMixtureTest(momentsOf(control), momentsOf(treatment), {
            alpha,
            tuningSampleSize: 2 * rule.min_sample_per_variant,
          });
    const previous = input.previous_p_values?.[treatment.variant_key];
    const runningPValue = runningMinimumPValue(previous, result.pValue);
    const significant = result.rejectsNull || (previous !== undefined && previous <= alpha);
    return { ...result, variant_key: treatment.variant_key, running_p_value: runningPValue, alpha, significant };
  });
}

function describeEvidence(evidence: TreatmentEvidence): string {
  return `${evidence.variant_key}: difference ${evidence.delta.toPrecision(4)}, always-valid p = ${evidence.running_p_value.toPrecision(3)} (significant below ${evidence.alpha.toPrecision(3)})`;
}

function sequentialOutcome(input: Omit<DecisionInput, 'days_elapsed'>): Outcome {
  const control = controlOf(input.variants);
  const evidence = sequentialEvidence(input);
  // The tests are two-sided; the direction only says which sign of the difference is good.
  const sign = input.higher_is_better === false ? -1 : 1;
  const better = evidence.filter((item) => item.significant && sign * item.delta > 0);
  if (better.length > 0) {
    const best = [...better].sort((a, b) => sign * (b.delta - a.delta))[0] as TreatmentEvidence;
    return { kind: 'winner', variantKey: best.variant_key, reason: `beats the control; ${describeEvidence(best)}` };
  }
  const worse = evidence.filter((item) => item.significant && sign * item.delta < 0);
  if (evidence.length > 0 && worse.length === evidence.length) {
    const reason = `every variant is worse than the control; ${worse.map(describeEvidence).join('; ')}`;
    return { kind: 'winner', variantKey: control.variant_key, reason };
  }
  const margin = practicalMargin(input.rule, control);
  const inside = (item: TreatmentEvidence): boolean => Math.abs(item.delta) + item.halfWidth < margin && Number.isFinite(item.halfWidth);
  if (evidence.length > 0 && margin > 0 && evidence.every(inside)) {
    const reason = `every variant's always-valid interval lies within ±${margin.toPrecision(3)} of the control (the minimum detectable effect)`;
    return { kind: 'no_difference', reason };
  }
  const summary = evidence.length > 0 ? evidence.map(describeEvidence).join('; ') : 'no variant to compare with the control';
  return { kind: 'undecided', reason: `not significant yet; ${summary}` };
}

/** Evaluate the experiment's decision rule. Pure: same input, same decision. */
export function decide(input: DecisionInput): Decision {
  const { rule, variants } = input;
  if (variants.length < 2) {
    return { satisfied: false, verdict: 'keep_running', variant_key: null, reason: 'fewer than two variants' };
  }
  const outcome = rule.method === 'bayesian.posterior_threshold' ? posteriorThresholdOutcome(variants, rule) : sequentialOutcome(input);
  if (outcome.kind === 'winner') {
    return { satisfied: true, verdict: 'winner', variant_key: outcome.variantKey, reason: outcome.reason };
  }
  if (outcome.kind === 'no_difference') {
    return { satisfied: false, verdict: 'no_difference', variant_key: null, reason: outcome.reason };
  }
  if (input.days_elapsed >= rule.max_duration_days) {
    const reason = `the planned maximum of ${daysText(rule.max_duration_days)} is over (${daysText(input.days_elapsed)} running); ${outcome.reason}`;
    return { satisfied: false, verdict: 'max_duration_reached', variant_key: null, reason };
  }
  return { satisfied: false, verdict: 'keep_running', variant_key: null, reason: outcome.reason };
}

/** Convenience for binary metrics: the DecisionVariant fields from counts. */
export function binaryDecisionVariant(variantKey: string, isControl: boolean, units: number, conversions: number, probBest: number | null): DecisionVariant {
  const moments = bernoulliMoments(units, conversions);
  return {
    variant_key: variantKey,
    is_control: isControl,
    sample_size: units,
    observed_rate: moments.mean,
    unit_variance: moments.variance,
    prob_best: probBest,
  };
}

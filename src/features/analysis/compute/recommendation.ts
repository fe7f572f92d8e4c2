/**
 * The recommendation (docs/analysis.md "The recommendation"): what a person should do, read from a
 * snapshot's own fields. Health comes before the effect, as in Statsig's, Eppo's and GrowthBook's
 * decision frameworks: a verdict of "winner" above a sample-ratio mismatch is not a reason to
 * ship. Pure (no I/O, no clock), and it reads only what a stored snapshot holds, so snapshots
 * stored before recommendations existed get theirs from the same function when they are read.
 *
 * The order, first match wins:
 * 1. investigate: no exposed unit; the split does not match the weights (SRM); a metric without
 *    any counted event although units were exposed; no primary metric to decide on.
 * 2. rollback: any non-control variant harms a guardrail (that variant, whatever the primary metric
 *    says); or the decision rule found the control best.
 * 3. keep_running: a winner or no-difference finding before every weighted variant reached
 *    min_sample_per_variant (the planned sample); no rule satisfied yet.
 * 4. ship: the winner, with every check above passed, unless the multiple-testing correction moved
 *    its p-value on the primary metric above the bar its rule's threshold sets (keep_running,
 *    not_significant_after_correction); the ship message gives the adjusted p-value it read.
 * 5. no_difference: the rule ruled out an effect of the minimum detectable size, or the planned
 *    duration ended (with the planned sample) without a winner.
 */
import { chanceText, pValueText, resolveDecisionRule, ruleName, type DecisionRuleSettings } from '../../../stats/index.js';
import type { Allocation } from '../../experiments/allocation.js';
import type { AnalysedMetric, Breakdown, MultipleTestingReport, Recommendation, RecommendationReason, SnapshotDecision, Traffic } from '../schemas.js';
import { correctionOf, correctionText } from './correction-words.js';

/** What a recommendation reads from a primary-metric or guardrail result. */
interface VariantCounts {
  variant_key: string;
  is_control: boolean;
  conversions: number;
  effect: {
    relative: { mean: number | null; credible_interval_95: [number, number] | null };
    chance_to_beat_control: number;
    p_value?: number | undefined;
    adjusted_p_value?: number | null | undefined;
  } | null;
}

export interface RecommendationInput {
  primary_metric: Pick<AnalysedMetric, 'key' | 'name' | 'kind'> | null;
  per_variant: readonly VariantCounts[];
  guardrails: ReadonlyArray<{ metric_key: string; metric_name?: string; per_variant: readonly VariantCounts[] }>;
  traffic: readonly Traffic[];
  srm_chi_squared_p: number | null;
  srm_warning: boolean;
  decision: Pick<SnapshotDecision, 'verdict' | 'variant_key' | 'method' | 'days_elapsed' | 'guardrail_regressions'>;
  breakdowns: ReadonlyArray<Pick<Breakdown, 'dimension'> & { values: ReadonlyArray<{ value: string; label?: string; srm_warning: boolean }> }>;
  /** The correction the effects' adjusted_p_value carry; null or absent in snapshots stored before it. */
  multiple_testing?: MultipleTestingReport | null | undefined;
}

/** What the snapshot alone does not say: the plan it is read against and whether the experiment stopped. */
export interface RecommendationContext {
  min_sample_per_variant: number;
  max_duration_days: number;
  /** The experiment had stopped when the snapshot was computed: no message then says "stop the experiment". */
  stopped: boolean;
  /** The rule's posterior_threshold: 2·(1 − it) is the p-value bar a winner's adjusted p-value is read against (default: the rule's default). */
  posterior_threshold?: number | undefined;
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const reason = (code: RecommendationReason['code'], message: string): RecommendationReason => ({ code, message });
const count = (value: number) => value.toLocaleString('en-US');
const percent = (value: number) => `${value >= 0 ? '+' : ''}${(100 * value).toFixed(1)}%`;

/** Slices named in an SRM message, beyond which it says "and N more". */
const SLICES_NAMED = 3;

/** A metric as people know it: its name (its key only in snapshots stored before names were carried). */
function metricName(metric: { key: string; name?: string | undefined }): string {
  return metric.name || metric.key;
}

/** The decision rule by its name in words ("the sequential test (mSPRT)"), never its method id. */
function rule(input: RecommendationInput): string {
  return ruleName(input.decision.method);
}

function exposedUnits(input: RecommendationInput): number {
  return input.traffic.reduce((total, variant) => total + variant.exposed_units, 0);
}

function srmReason(input: RecommendationInput): RecommendationReason {
  const slices = input.breakdowns.flatMap((breakdown) =>
    breakdown.values.filter((value) => value.srm_warning).map((value) => `${breakdown.dimension} = ${value.label ?? value.value}`),
  );
  const p = input.srm_chi_squared_p === null ? '' : ` (sample ratio test ${pValueText(input.srm_chi_squared_p)}, below 0.001)`;
  const where =
    slices.length === 0
      ? ' No single slice of the breakdowns explains it, so look upstream (the assignment, the weights, exposure logging in every client).'
      : ` The split is broken in ${slices.slice(0, SLICES_NAMED).join(', ')}${slices.length > SLICES_NAMED ? ` and ${slices.length - SLICES_NAMED} more slices` : ''}.`;
  return reason(
    'srm',
    `The units per variant do not match the weights${p}: assignment or exposure logging is broken, so no result of this experiment can be trusted until the cause is found.${where}`,
  );
}

function metricsWithoutEvents(input: RecommendationInput): Array<{ key: string; name?: string | undefined }> {
  const silent = (list: readonly VariantCounts[]) => list.length > 0 && list.every((variant) => variant.conversions === 0);
  const metrics: Array<{ key: string; name?: string | undefined; per_variant: readonly VariantCounts[] }> = [
    ...(input.primary_metric ? [{ ...input.primary_metric, per_variant: input.per_variant }] : []),
    ...input.guardrails.map((guardrail) => ({ key: guardrail.metric_key, name: guardrail.metric_name, per_variant: guardrail.per_variant })),
  ];
  return metrics.filter((metric) => silent(metric.per_variant));
}

/** The failed health checks: any of them means investigate, whatever the effect says. */
function failedChecks(input: RecommendationInput): RecommendationReason[] {
  const units = exposedUnits(input);
  if (units === 0) {
    return [
      reason(
        'no_exposures',
        'No unit has been exposed yet: check that clients call /v1/assign (or log exposures with POST /v1/exposures) for this experiment’s key in the right environment.',
      ),
    ];
  }
  const failed: RecommendationReason[] = [];
  if (input.srm_warning) failed.push(srmReason(input));
  for (const metric of metricsWithoutEvents(input)) {
    failed.push(
      reason(
        'no_metric_events',
        `No exposed unit has an event counted in ${metricName(metric)} among ${count(units)} exposed units: check the metric’s event key, that events carry the same unit id as the assignment, and its window.`,
      ),
    );
  }
  if (input.primary_metric === null) {
    failed.push(reason('no_primary_metric', 'The experiment has no primary metric, so there is nothing to decide on: set one to get a recommendation.'));
  }
  return failed;
}

/** Weighted variants short of the planned sample, as "key (n units)". */
function shortVariants(input: RecommendationInput, context: RecommendationContext): string[] {
  return input.traffic
    .filter((variant) => variant.weight > 0 && variant.exposed_units < context.min_sample_per_variant)
    .map((variant) => `${variant.variant_key} (${count(variant.exposed_units)})`);
}

function belowMinSample(short: readonly string[], context: RecommendationContext): RecommendationReason {
  const plan = `The plan asks for at least ${count(context.min_sample_per_variant)} units per variant`;
  const advice = context.stopped
    ? 'The experiment stopped short of its planned sample, so its results cannot settle the question.'
    : 'Keep the experiment running until every variant reaches it.';
  return reason('below_min_sample', `${plan}; ${short.join(', ')} ${short.length === 1 ? 'has' : 'have'} fewer. ${advice}`);
}

function liftOf(input: RecommendationInput, variantKey: string): string {
  const effect = input.per_variant.find((variant) => variant.variant_key === variantKey)?.effect;
  const relative = effect?.relative;
  if (!relative || relative.mean === null) return '';
  const interval = relative.credible_interval_95
    ? ` (95% interval ${percent(relative.credible_interval_95[0])} to ${percent(relative.credible_interval_95[1])})`
    : '';
  return ` by ${percent(relative.mean)}${interval}`;
}

function controlOf(input: RecommendationInput): string {
  return (input.per_variant.find((variant) => variant.is_control) ?? input.per_variant[0])?.variant_key ?? 'control';
}

/** The relative effect of a variant on a guardrail, as " by +34.7% (95% interval +32.2% to +37.3%)", or nothing without one. */
function guardrailLift(guardrail: { per_variant: readonly VariantCounts[] } | undefined, variantKey: string): string {
  const relative = guardrail?.per_variant.find((variant) => variant.variant_key === variantKey)?.effect?.relative;
  if (!relative || relative.mean === null) return '';
  const interval = relative.credible_interval_95
    ? ` (95% interval ${percent(relative.credible_interval_95[0])} to ${percent(relative.credible_interval_95[1])})`
    : '';
  return ` by ${percent(relative.mean)}${interval}`;
}

function regressionReasons(input: RecommendationInput): RecommendationReason[] {
  return input.decision.guardrail_regressions.map((regression) => {
    const guardrail = input.guardrails.find((item) => item.metric_key === regression.metric_key);
    const name = metricName({ key: regression.metric_key, name: regression.metric_name || guardrail?.metric_name });
    const chance = chanceText(regression.chance_to_beat_control);
    return reason(
      'guardrail_regression',
      `${regression.variant_key} makes the guardrail ${name} worse${guardrailLift(guardrail, regression.variant_key)}; its chance to beat the control there is ${chance}, below 5%. Roll ${regression.variant_key} back unless its effect on ${primaryName(input)} is worth that cost.`,
    );
  });
}

/**
 * A harmed guardrail is a reason on its own, for any non-control variant, whatever the primary
 * metric says: rollback of the variant that harms most (the lowest chance to beat control), with a
 * reason for every regression so none goes unnamed.
 */
function regressionRecommendation(input: RecommendationInput): Recommendation | null {
  const regressions = input.decision.guardrail_regressions;
  if (regressions.length === 0) return null;
  const worst = regressions.reduce((first, item) => (item.chance_to_beat_control < first.chance_to_beat_control ? item : first));
  return { action: 'rollback', variant_key: worst.variant_key, reasons: regressionReasons(input) };
}

function primaryName(input: RecommendationInput): string {
  return input.primary_metric ? metricName(input.primary_metric) : 'the primary metric';
}

function winnerRecommendation(input: RecommendationInput, context: RecommendationContext, winner: string): Recommendation {
  const control = controlOf(input);
  if (winner === control) {
    const message = `${capitalised(rule(input))} finds ${control}, the control, best on ${primaryName(input)}: every other variant does worse. Give everyone ${control}.`;
    return { action: 'rollback', variant_key: control, reasons: [reason('control_won', message)] };
  }
  const short = shortVariants(input, context);
  if (short.length > 0) return { action: 'keep_running', variant_key: null, reasons: [belowMinSample(short, context)] };
  const correction = correctionOf(input, winner, context.posterior_threshold);
  if (correction?.blocks) {
    const message = `${winner} leads ${control} on ${primaryName(input)}${liftOf(input, winner)} under ${rule(input)}, but ${correctionText(correction)}, above the ${correction.bar.toFixed(2)} the rule’s threshold stands for: with this many goals read at once the lead may be chance. ${context.stopped ? 'The results are inconclusive.' : 'Keep the experiment running.'}`;
    return { action: 'keep_running', variant_key: null, reasons: [reason('not_significant_after_correction', message)] };
  }
  const next = context.stopped ? `Ship ${winner}.` : `You can stop the experiment and ship ${winner}.`;
  const adjusted = correction ? ` ${capitalised(correctionText(correction))}.` : '';
  const message = `${winner} beats ${control} on ${primaryName(input)}${liftOf(input, winner)} under ${rule(input)}; the split matches the weights, no guardrail regressed and every variant reached the planned minimum sample.${adjusted} ${next}`;
  return { action: 'ship', variant_key: winner, reasons: [reason('rule_satisfied', message)] };
}

function undecidedRecommendation(input: RecommendationInput, context: RecommendationContext): Recommendation {
  const short = shortVariants(input, context);
  const verdict = input.decision.verdict;
  const days = `${Math.floor(input.decision.days_elapsed)} of ${context.max_duration_days} days`;
  if (verdict === 'max_duration_reached') {
    const over = `The planned duration is over (${days}) without a winner on ${primaryName(input)}.`;
    if (short.length > 0) return { action: 'keep_running', variant_key: null, reasons: [reason('max_duration_reached', over), belowMinSample(short, context)] };
    const message = `${over} Any effect is smaller than this experiment can detect: keep the control, or decide on other grounds.`;
    return { action: 'no_difference', variant_key: null, reasons: [reason('max_duration_reached', message)] };
  }
  if (short.length > 0) return { action: 'keep_running', variant_key: null, reasons: [belowMinSample(short, context)] };
  if (verdict === 'no_difference') {
    const message = `${capitalised(rule(input))} rules out a difference as large as the minimum detectable effect on ${primaryName(input)}: the variants perform alike.`;
    return { action: 'no_difference', variant_key: null, reasons: [reason('no_difference', message)] };
  }
  const message = context.stopped
    ? `The experiment stopped (${days}) before ${rule(input)} found a winner or ruled out a difference on ${primaryName(input)}: the results are inconclusive.`
    : `${capitalised(rule(input))} has not found a winner or ruled out a difference on ${primaryName(input)} yet (${days}): keep the experiment running.`;
  return { action: 'keep_running', variant_key: null, reasons: [reason('rule_not_satisfied', message)] };
}

/** The recommendation of a snapshot. Never `ship` while a check fails. */
export function recommend(input: RecommendationInput, context: RecommendationContext): Recommendation {
  const failed = failedChecks(input);
  if (failed.length > 0) return { action: 'investigate', variant_key: null, reasons: failed };
  const harmed = regressionRecommendation(input);
  if (harmed) return harmed;
  const winner = input.decision.verdict === 'winner' ? input.decision.variant_key : null;
  if (winner !== null) return winnerRecommendation(input, context, winner);
  return undecidedRecommendation(input, context);
}

/** What the planned sample is read from: the decision rule, and a bandit's own stopping rule when it is one. */
export interface PlannedExperiment {
  decision_rule: Partial<DecisionRuleSettings>;
  allocation?: Allocation | undefined;
}

/**
 * The units per variant the stopping rule that applies waits for: a bandit's min_units_per_variant
 * (its own stopping rule replaces the decision rule's), else the rule's min_sample_per_variant.
 */
export function plannedSamplePerVariant(experiment: PlannedExperiment): number {
  if (experiment.allocation?.type === 'bandit') return experiment.allocation.min_units_per_variant;
  return resolveDecisionRule(experiment.decision_rule).min_sample_per_variant;
}

/** The context of a snapshot computed now from the experiment's rule. */
export function recommendationContext(experiment: PlannedExperiment, stopped: boolean): RecommendationContext {
  const rule = resolveDecisionRule(experiment.decision_rule);
  return {
    min_sample_per_variant: plannedSamplePerVariant(experiment),
    max_duration_days: rule.max_duration_days,
    stopped,
    posterior_threshold: rule.posterior_threshold,
  };
}

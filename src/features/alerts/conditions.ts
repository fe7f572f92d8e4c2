// What a snapshot says, as alert conditions: pure functions of the snapshot and the experiment,
// so that which conditions hold is decided in one place and tested without a database.
import { plannedSamplePerVariant, type AnalysisSnapshot, type RecommendationAction, type VariantPosterior } from '../analysis/read.js';
import type { Experiment } from '../experiments/read.js';

/** The snapshot's recommendation (decisions §15), with `recommendation` naming its action. */
export interface Recommendation {
  recommendation: RecommendationAction;
  variant_key: string | null;
  reasons: Array<{ code: string; message: string }>;
}

export function recommendationOf(snapshot: AnalysisSnapshot): Recommendation | null {
  const stored = snapshot.decision.recommendation as AnalysisSnapshot['decision']['recommendation'] | undefined;
  if (!stored) return null;
  return { recommendation: stored.action, variant_key: stored.variant_key, reasons: stored.reasons };
}

/** Every variant that takes traffic has min_sample_per_variant exposed units: only then may anything about the effect fire. */
export function minSampleReached(experiment: Experiment, snapshot: AnalysisSnapshot): boolean {
  const min = plannedSamplePerVariant(experiment);
  const live = snapshot.traffic.filter((variant) => variant.weight > 0);
  return live.length > 0 && live.every((variant) => variant.exposed_units >= min);
}

/** The slice with the smallest SRM p-value over every breakdown, the first place to look for a broken split. */
export function worstSrmSlice(snapshot: AnalysisSnapshot): { dimension: string; value: string; p: number } | null {
  let worst: { dimension: string; value: string; p: number } | null = null;
  for (const breakdown of snapshot.breakdowns) {
    for (const slice of breakdown.values) {
      const p = slice.srm_chi_squared_p;
      if (p !== null && (worst === null || p < worst.p)) worst = { dimension: breakdown.dimension, value: slice.value, p };
    }
  }
  return worst;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Why the experiment has no data: no exposures after a day running, or a metric with no events. Empty when it has. */
export function noDataReasons(experiment: Experiment, snapshot: AnalysisSnapshot): string[] {
  const startedAt = experiment.started_at === null ? null : Date.parse(experiment.started_at);
  if (startedAt === null || Date.parse(snapshot.computed_at) - startedAt < DAY_MS) return [];
  const units = snapshot.traffic.reduce((sum, variant) => sum + variant.exposed_units, 0);
  if (units === 0) return ['no exposures in the first 24 hours of running'];
  const silent = (perVariant: VariantPosterior[]) => perVariant.length > 0 && perVariant.every((variant) => variant.conversions === 0);
  const reasons: string[] = [];
  // Named as people know the metrics; the key only for snapshots stored before names were carried.
  if (snapshot.primary_metric && silent(snapshot.per_variant))
    reasons.push(`no events for the primary metric ${snapshot.primary_metric.name || snapshot.primary_metric.key}`);
  for (const guardrail of snapshot.guardrails) {
    if (silent(guardrail.per_variant)) reasons.push(`no events for the guardrail metric ${guardrail.metric_name || guardrail.metric_key}`);
  }
  return reasons;
}

const GUARDRAIL_PREFIX = 'guardrail:';

/** The alert condition of a guardrail harmed by a variant: `guardrail:{metric id}:{variant key}`. */
export function guardrailCondition(metricId: string, variantKey: string): string {
  return `${GUARDRAIL_PREFIX}${metricId}:${variantKey}`;
}

/** The guardrail and variant of a guardrail condition, or null for any other condition. */
export function parseGuardrailCondition(condition: string): { metricId: string; variantKey: string } | null {
  if (!condition.startsWith(GUARDRAIL_PREFIX)) return null;
  const rest = condition.slice(GUARDRAIL_PREFIX.length);
  const colon = rest.indexOf(':');
  // Conditions stored before they named a variant hold only the metric id: they no longer match any state.
  if (colon < 0) return null;
  return { metricId: rest.slice(0, colon), variantKey: rest.slice(colon + 1) };
}

/** The states a snapshot puts each condition in; `value` tells one active state from another. */
export interface ConditionState {
  condition: string;
  active: boolean;
  value: string | null;
}

/**
 * Each condition of the snapshot. The recommendation is active while it is something to act on
 * (anything but keep_running), and its value is the recommendation with its variant, so a change
 * from ship to rollback fires again. Effect conditions wait for the minimum sample.
 */
export function conditionsOf(experiment: Experiment, snapshot: AnalysisSnapshot): ConditionState[] {
  const sampled = minSampleReached(experiment, snapshot);
  const states: ConditionState[] = [{ condition: 'srm', active: snapshot.srm_warning, value: null }];
  const recommendation = recommendationOf(snapshot);
  if (recommendation) {
    const effectBased = recommendation.recommendation !== 'investigate' && recommendation.recommendation !== 'keep_running';
    const active = recommendation.recommendation !== 'keep_running' && (sampled || !effectBased);
    states.push({ condition: 'recommendation', active, value: active ? `${recommendation.recommendation}:${recommendation.variant_key ?? ''}` : null });
  }
  // One condition per guardrail and variant: a second variant harming the same guardrail is news of its own.
  const regressed = new Set(
    sampled ? snapshot.decision.guardrail_regressions.map((regression) => guardrailCondition(regression.metric_id, regression.variant_key)) : [],
  );
  for (const guardrail of snapshot.guardrails) {
    for (const variant of guardrail.per_variant.filter((item) => !item.is_control)) {
      const condition = guardrailCondition(guardrail.metric_id, variant.variant_key);
      states.push({ condition, active: regressed.has(condition), value: null });
    }
  }
  const noData = noDataReasons(experiment, snapshot);
  states.push({ condition: 'no_data', active: noData.length > 0, value: noData.length > 0 ? noData.join('; ') : null });
  states.push({ condition: 'analysis_failed', active: false, value: null });
  return states;
}

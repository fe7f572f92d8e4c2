/**
 * Turns per-variant totals from the database into the snapshot document: posteriors, prob_best,
 * expected loss, SRM and the decision. Pure (no I/O, no clock), so the same totals always give
 * the same snapshot; the statistics are src/stats (its Monte Carlo is seeded).
 */
import {
  analyzeBinaryMetric,
  analyzeNormalArms,
  analyzeNumericMetric,
  ratioPosterior,
  decide,
  resolveDecisionRule,
  sampleRatioMismatch,
  sequentialEvidence,
  type Decision,
  type DecisionRuleSettings,
  type VariantAnalysis,
} from '../../../stats/index.js';
import type { MetricRow } from '../../metrics/read.js';
import type { Variant } from '../../experiments/schemas.js';
import { banditDecision, banditPrimary, banditSrm, type BanditInput } from './bandit-analysis.js';
import { analyzeWithCuped, unadjustedMean, type CupedSettings } from './cuped-analysis.js';
import type { CupedReport, Guardrail, GuardrailRegression, MultipleTestingReport, SnapshotDecision, Traffic, VariantPosterior } from '../schemas.js';
import { applyCorrection, type MultipleTestingSettings } from './multiple-testing.js';
import { analyzeQuantile, quantileCupedReport, withQuantile, type QuantileEstimates } from './quantile-analysis.js';
import type { MetricTotals, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Always-valid p-values of the previous snapshot, reusable only under the same rule and metric. */
export interface PreviousEvidence {
  method: string;
  primary_metric_id: string | null;
  p_values: Record<string, number>;
}

export interface BuildInput {
  variants: readonly Variant[];
  decisionRule: Partial<DecisionRuleSettings>;
  startedAt: number;
  stoppedAt: number | null;
  computedAt: number;
  primary: MetricRow | null;
  guardrails: readonly MetricRow[];
  /** Goals beside the primary; their totals follow the guardrails'. */
  secondaries?: readonly MetricRow[];
  /** The correction over the goals (and guardrails when in scope); absent: Benjamini-Hochberg over the goals. */
  multipleTesting?: MultipleTestingSettings;
  /** Totals by variant key; `metrics` holds the primary's totals first (when there is one), then the guardrails', then the secondaries'. */
  totals: ReadonlyMap<string, VariantTotals>;
  /** Per metric (the totals' order), a quantile metric's estimates by variant key; null for the other kinds. */
  quantiles?: readonly (QuantileEstimates | null)[];
  /** The cap each metric applied (primary first, then the guardrails, then the secondaries), null when uncapped. */
  capsApplied?: readonly (number | null)[];
  previous: PreviousEvidence | null;
  /** The experiment's CUPED settings; null (or absent) when variance reduction is off. */
  cuped?: CupedSettings | null;
  /** A bandit's periods and per-period totals: its primary metric and SRM are then stratified (bandit-analysis.ts). */
  bandit?: BanditInput | null;
}

/** A guardrail's chance to beat control below this, for the variant the decision points at, is a regression. */
export const GUARDRAIL_REGRESSION_CHANCE = 0.05;

export interface BuiltSnapshot {
  per_variant: VariantPosterior[];
  /** The secondary metrics' results; service.ts adds each metric's description. */
  secondary_per_variant: VariantPosterior[][];
  secondary_cuped: (CupedReport | null)[];
  multiple_testing: MultipleTestingReport;
  guardrails: Guardrail[];
  traffic: Traffic[];
  decision_rule_satisfied: boolean;
  /** The rule's decision; the recommendation is added once the breakdowns are known (recommendation.ts). */
  decision: Omit<SnapshotDecision, 'recommendation'>;
  srm_chi_squared_p: number | null;
  srm_warning: boolean;
  /** The primary metric's CUPED report (null when off or without a primary metric). */
  primary_cuped: CupedReport | null;
}

function unitsOf(totals: BuildInput['totals'], key: string): number {
  return totals.get(key)?.units ?? 0;
}

/**
 * The variants that take part in a comparison: those with traffic or a weight. A zero-weight
 * variant that never received a unit would keep its flat prior and could look "best".
 */
export function analysedVariants(input: Pick<BuildInput, 'variants' | 'totals'>): Variant[] {
  return input.variants.filter((variant) => variant.weight > 0 || unitsOf(input.totals, variant.key) > 0);
}

function toPosterior(analysis: VariantAnalysis, conversions: number, observedRate: number): VariantPosterior {
  return {
    variant_key: analysis.variant_key,
    is_control: analysis.is_control,
    sample_size: analysis.sample_size,
    conversions,
    observed_rate: observedRate,
    posterior: { mean: analysis.posterior.mean, credible_interval_95: analysis.posterior.credible_interval_95 },
    prob_best: analysis.prob_best,
    expected_loss_if_stop_now: analysis.expected_loss_if_stop_now,
    effect: analysis.effect,
  };
}

type Arm = { variant: Variant; totals: MetricTotals; units: number };

/** Ratio metric: sum of numerators / sum of denominators per variant, delta-method variance. */
function analyzeRatio(arms: readonly Arm[], higherIsBetter: boolean): VariantAnalysis[] {
  return analyzeNormalArms(
    arms.map(({ variant, totals }) => {
      const posterior = ratioPosterior({
        n: totals.n,
        sumX: totals.sum,
        sumY: totals.sum_y,
        sumXX: totals.sum_of_squares,
        sumYY: totals.sum_of_squares_y,
        sumXY: totals.sum_xy,
      });
      return {
        variant_key: variant.key,
        is_control: variant.is_control,
        sample_size: totals.n,
        mean: posterior.mean,
        unit_variance: posterior.unitVariance,
        variance_of_mean: posterior.varianceOfMean,
      };
    }),
    { higherIsBetter },
  );
}

function analyzeArms(metric: MetricRow, arms: readonly Arm[]): VariantAnalysis[] {
  const higherIsBetter = metric.higher_is_better === 1;
  if (metric.kind === 'ratio') return analyzeRatio(arms, higherIsBetter);
  if (metric.kind === 'binary') {
    const counts = arms.map(({ variant, totals, units }) => ({
      variant_key: variant.key,
      is_control: variant.is_control,
      units,
      conversions: totals.conversions,
    }));
    return analyzeBinaryMetric(counts, { higherIsBetter });
  }
  const sums = arms.map(({ variant, totals }) => ({
    variant_key: variant.key,
    is_control: variant.is_control,
    units: totals.n,
    sum: totals.sum,
    sum_of_squares: totals.sum_of_squares,
  }));
  return analyzeNumericMetric(sums, { higherIsBetter });
}

/** One metric's VariantAnalysis per analysed variant (the decision reads these). */
export function analyzeMetric(
  metric: MetricRow,
  index: number,
  variants: readonly Variant[],
  totals: BuildInput['totals'],
  cuped: CupedSettings | null,
  quantiles?: BuildInput['quantiles'],
) {
  const metricTotals = variants.map((variant) => totals.get(variant.key)?.metrics[index] ?? EMPTY_TOTALS);
  const estimates = metric.kind === 'quantile' ? quantiles?.[index] : null;
  if (estimates) {
    const analyses = analyzeQuantile(metric, variants, estimates);
    const posteriors = analyses.map((analysis, i) =>
      withQuantile(toPosterior(analysis, (metricTotals[i] as MetricTotals).conversions, analysis.observed_rate), metric, estimates),
    );
    // A quantile is not adjusted by CUPED: its report says so when the experiment uses it.
    return { analyses, posteriors, cuped: cuped ? quantileCupedReport(cuped) : null };
  }
  const arms = variants.map((variant, i) => ({ variant, totals: metricTotals[i] as MetricTotals, units: unitsOf(totals, variant.key) }));
  const adjusted = cuped ? analyzeWithCuped(metric, arms, cuped) : null;
  const analyses = adjusted?.analyses ?? analyzeArms(metric, arms);
  // With CUPED the analysis carries the adjusted mean; observed_rate stays the unadjusted one.
  const posteriors = analyses.map((analysis, i) =>
    toPosterior(
      analysis,
      (metricTotals[i] as MetricTotals).conversions,
      adjusted?.analyses ? unadjustedMean(metricTotals[i] as MetricTotals) : analysis.observed_rate,
    ),
  );
  return { analyses, posteriors, cuped: adjusted?.report ?? null };
}

/** Without a primary metric: sample sizes only, no made-up posterior. */
export function sampleSizesOnly(variants: readonly Variant[], totals: BuildInput['totals']): VariantPosterior[] {
  return variants.map((variant) => ({
    variant_key: variant.key,
    is_control: variant.is_control,
    sample_size: unitsOf(totals, variant.key),
    conversions: 0,
    observed_rate: null,
    posterior: { mean: null, credible_interval_95: null },
    prob_best: null,
    expected_loss_if_stop_now: null,
    effect: null,
  }));
}

function isSequential(rule: DecisionRuleSettings): boolean {
  return rule.method !== 'bayesian.posterior_threshold';
}

function previousPValues(input: BuildInput, rule: DecisionRuleSettings): Record<string, number> | undefined {
  const previous = input.previous;
  if (!previous || previous.method !== rule.method || previous.primary_metric_id !== (input.primary?.id ?? null)) return undefined;
  return previous.p_values;
}

function decisionOf(
  input: BuildInput,
  analyses: readonly VariantAnalysis[] | null,
): { decision: Decision; pValues: Record<string, number> | null; days: number } {
  const rule = resolveDecisionRule(input.decisionRule);
  const days = Math.max(0, ((input.stoppedAt ?? input.computedAt) - input.startedAt) / DAY_MS);
  if (analyses === null) {
    const late = days >= rule.max_duration_days;
    const reason = 'the experiment has no primary metric; only sample sizes and SRM are reported';
    return { decision: { satisfied: false, verdict: late ? 'max_duration_reached' : 'keep_running', variant_key: null, reason }, pValues: null, days };
  }
  if (input.bandit) return { decision: banditDecision(analyses, input.bandit.stopAtProbBest, days, rule.max_duration_days), pValues: null, days };
  const previous = previousPValues(input, rule);
  const higherIsBetter = input.primary?.higher_is_better !== 0;
  const decision = decide({
    variants: analyses,
    rule,
    days_elapsed: days,
    higher_is_better: higherIsBetter,
    ...(previous ? { previous_p_values: previous } : {}),
  });
  if (!isSequential(rule) || analyses.length < 2) return { decision, pValues: null, days };
  const evidence = sequentialEvidence({ variants: analyses, rule, ...(previous ? { previous_p_values: previous } : {}) });
  return { decision, pValues: Object.fromEntries(evidence.map((item) => [item.variant_key, item.running_p_value])), days };
}

/**
 * The guardrails each non-control variant makes worse: its chance to beat control on them is
 * below GUARDRAIL_REGRESSION_CHANCE (in each guardrail's own direction). Every variant counts, not
 * only the one the decision points at: a variant that is not winning can still do harm, and
 * rolling it back is the point of a guardrail. Counted only once every weighted variant reached
 * the planned minimum sample (`sampled`), the same gate the decision rule has before a winner.
 */
export function guardrailRegressions(guardrails: readonly Guardrail[], sampled: boolean): GuardrailRegression[] {
  if (!sampled) return [];
  return guardrails.flatMap((guardrail) =>
    guardrail.per_variant.flatMap((variant) => {
      const chance = variant.effect?.chance_to_beat_control;
      if (variant.is_control || chance === undefined || chance >= GUARDRAIL_REGRESSION_CHANCE) return [];
      // In the family (scope goals_and_guardrails): the harm must also survive the correction, at
      // the two-sided tail the chance threshold corresponds to.
      const adjusted = variant.effect?.adjusted_p_value;
      if (adjusted !== undefined && adjusted !== null && adjusted >= 2 * GUARDRAIL_REGRESSION_CHANCE) return [];
      return [
        {
          metric_id: guardrail.metric_id,
          metric_key: guardrail.metric_key,
          metric_name: guardrail.metric_name,
          variant_key: variant.variant_key,
          chance_to_beat_control: chance,
        },
      ];
    }),
  );
}

/** Every weighted variant has at least `minSample` exposed units. */
function sampleReached(traffic: readonly Traffic[], minSample: number): boolean {
  return traffic.every((variant) => variant.weight === 0 || variant.exposed_units >= minSample);
}

/**
 * The cap a metric result reports. A ratio metric is never capped itself: its numerator's and
 * denominator's own caps apply to their sums (the pass carries the numerator's as the ratio's
 * spec cap), so reporting that as the ratio's cap would misdescribe it.
 */
export function reportedCap(metric: Pick<MetricRow, 'kind'>, cap: number | null): number | null {
  return metric.kind === 'ratio' ? null : cap;
}

/** The primary metric's analysis: stratified by period for a bandit (without CUPED), as for any metric otherwise. */
function primaryAnalysis(input: BuildInput, metric: MetricRow, variants: readonly Variant[], cuped: CupedSettings | null) {
  if (!input.bandit) return analyzeMetric(metric, 0, variants, input.totals, cuped, input.quantiles);
  const conversionsOf = (key: string) => input.totals.get(key)?.metrics[0]?.conversions ?? 0;
  return { ...banditPrimary(variants, input.bandit, metric.higher_is_better === 1, conversionsOf), cuped: null };
}

export function buildSnapshot(input: BuildInput): BuiltSnapshot {
  const variants = analysedVariants(input);
  const offset = input.primary ? 1 : 0;
  const cuped = input.cuped ?? null;
  const primary = input.primary ? primaryAnalysis(input, input.primary, variants, cuped) : null;
  const secondaryOffset = offset + input.guardrails.length;
  const secondaries = (input.secondaries ?? []).map((metric, index) =>
    analyzeMetric(metric, index + secondaryOffset, variants, input.totals, cuped, input.quantiles),
  );
  const guardrailAnalyses = input.guardrails.map((metric, index) => analyzeMetric(metric, index + offset, variants, input.totals, cuped, input.quantiles));
  const corrected = applyCorrection({
    goals: [...(primary ? [primary.posteriors] : []), ...secondaries.map((item) => item.posteriors)],
    guardrails: guardrailAnalyses.map((item) => item.posteriors),
    settings: input.multipleTesting ?? { method: 'benjamini_hochberg', scope: 'goals' },
  });
  const primaryPosteriors = primary ? (corrected.goals[0] as VariantPosterior[]) : null;
  const guardrails: Guardrail[] = input.guardrails.map((metric, index) => {
    const analysed = { ...(guardrailAnalyses[index] as ReturnType<typeof analyzeMetric>), posteriors: corrected.guardrails[index] as VariantPosterior[] };
    return {
      metric_id: metric.id,
      metric_key: metric.key,
      metric_name: metric.name,
      unit: metric.unit,
      higher_is_better: metric.higher_is_better === 1,
      cap_applied: reportedCap(metric, input.capsApplied?.[index + offset] ?? null),
      cuped: analysed.cuped,
      per_variant: analysed.posteriors,
    };
  });
  const srm = input.bandit
    ? banditSrm(input.variants, input.bandit)
    : sampleRatioMismatch(
        input.variants.map((variant) => unitsOf(input.totals, variant.key)),
        input.variants.map((variant) => variant.weight),
      );
  const { decision, pValues, days } = decisionOf(input, primary?.analyses ?? null);
  const rule = resolveDecisionRule(input.decisionRule);
  const traffic = input.variants.map((variant) => ({ variant_key: variant.key, weight: variant.weight, exposed_units: unitsOf(input.totals, variant.key) }));
  return {
    per_variant: primaryPosteriors ?? sampleSizesOnly(variants, input.totals),
    secondary_per_variant: corrected.goals.slice(primary ? 1 : 0),
    secondary_cuped: secondaries.map((item) => item.cuped),
    multiple_testing: corrected.report,
    guardrails,
    traffic,
    decision_rule_satisfied: decision.satisfied,
    decision: {
      verdict: decision.verdict,
      variant_key: decision.variant_key,
      reason: decision.reason,
      method: rule.method,
      days_elapsed: days,
      always_valid_p_values: pValues,
      guardrail_regressions: guardrailRegressions(guardrails, sampleReached(traffic, rule.min_sample_per_variant)),
    },
    srm_chi_squared_p: srm.pValue,
    srm_warning: srm.warning,
    primary_cuped: primary?.cuped ?? null,
  };
}

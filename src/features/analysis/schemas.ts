import Type, { type Static } from 'typebox';
import { MAX_PAGE_SIZE } from '../../http/pagination.js';
import { Id, Timestamp } from '../../http/schemas.js';
import { PlanningBlockSchema } from './planning-schema.js';
import { FunnelStepResultSchema, QuantileResultSchema } from './metric-kind-schemas.js';
import { WarehouseComputationSchema } from './warehouse/computation-schema.js';
export type { FunnelStepResult } from './metric-kind-schemas.js';

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Interval = Type.Tuple([Type.Number(), Type.Number()]);

export const EffectSchema = Type.Object(
  {
    absolute: Type.Object({
      mean: Type.Number({ description: 'posterior mean of (variant mean - control mean)' }),
      credible_interval_95: Type.Tuple([Type.Number(), Type.Number()], { description: '2.5% and 97.5% posterior quantiles of the difference' }),
    }),
    relative: Type.Object({
      mean: NullableNumber(
        'posterior mean of (variant mean / control mean - 1); null when the control mean is 0 (binary: while the control has no conversion)',
      ),
      credible_interval_95: Type.Union([Interval, Type.Null()], {
        description: '2.5% and 97.5% quantiles of the relative effect; null when the control mean is 0',
      }),
    }),
    chance_to_beat_control: Type.Number({ description: 'P(variant better than control) in the metric’s direction' }),
    p_value: Type.Optional(
      Type.Number({
        description: 'two-sided p-value 2·min(c, 1 − c), c the chance to beat control (absent in breakdown slices and in snapshots stored before it existed)',
      }),
    ),
    adjusted_p_value: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description:
          'p_value adjusted over the snapshot’s family (multiple_testing: every goal, and the guardrails when the scope says so, times every non-control variant); null for a guardrail outside the family',
      }),
    ),
    adjusted_interval_95: Type.Optional(
      Type.Union([Type.Object({ absolute: Interval, relative: Type.Union([Interval, Type.Null()]) }), Type.Null()], {
        description: 'Holm only: the Bonferroni interval (level 1 − 0.05/m over the family of m) of the absolute and relative effect; null otherwise',
      }),
    ),
  },
  { description: 'the variant against the control (docs/statistics.md)' },
);

export const VariantPosteriorSchema = Type.Object(
  {
    variant_key: Type.String(),
    is_control: Type.Boolean(),
    sample_size: Type.Integer({
      description: 'units analysed: the exposed units (for a mean metric, those with at least one value in their window)',
    }),
    conversions: Type.Integer({
      description: 'units with at least one counted event in their window (binary metrics: converted units)',
    }),
    observed_rate: NullableNumber('observed per-unit mean (binary: conversion rate); null without a metric'),
    posterior: Type.Object({
      mean: NullableNumber('posterior mean of the per-unit value; null without a metric'),
      credible_interval_95: Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Null()], {
        description: '2.5% and 97.5% posterior quantiles; null when undefined (numeric metric with fewer than 2 units, or no metric)',
      }),
    }),
    prob_best: NullableNumber('probability that this variant has the highest true value; null when undefined'),
    expected_loss_if_stop_now: NullableNumber(
      'E[max(best other variant - this variant, 0)] on the metric scale, in the metric’s direction: what choosing this variant now would forgo; null when undefined',
    ),
    effect: Type.Union([EffectSchema, Type.Null()], {
      description: 'against the control; null on the control, without a metric, and while an arm has too few units for a posterior',
    }),
    quantile: Type.Optional(QuantileResultSchema),
    steps: Type.Optional(
      Type.Array(FunnelStepResultSchema, {
        description: 'funnel metrics: each step in order (conversions of the last one are the variant’s conversions); absent for other metrics',
      }),
    ),
    pending_units: Type.Optional(
      Type.Integer({
        description:
          'retention metrics: live units whose retention window had not ended by the snapshot (or the stop), left out of sample_size; absent for other metrics',
      }),
    ),
  },
  { description: 'one variant of one metric: the spec’s VariantPosterior' },
);
export type VariantPosterior = Static<typeof VariantPosteriorSchema>;

const MetricKind = Type.Enum(['binary', 'count', 'revenue', 'duration', 'ratio', 'quantile', 'funnel', 'retention']);
const MetricAggregation = Type.Enum(['sum', 'mean', 'count']);

const HigherIsBetter = Type.Boolean({ description: 'the metric’s direction when the snapshot was computed' });
const CapApplied = NullableNumber('the cap each unit’s value was held to (a percentile cap’s value as computed for this snapshot); null when uncapped');

export const CupedReportSchema = Type.Object(
  {
    applied: Type.Boolean({ description: 'whether this metric’s posterior, effects and decision use the adjusted statistics' }),
    lookback_days: Type.Integer({ description: 'the pre-period before each unit’s first exposure' }),
    theta: NullableNumber('Cov(x, y) / Var(x) on the pooled units; null when not applied'),
    variance_reduction: NullableNumber('1 - adjusted variance / unadjusted variance, averaged over the variants; null when not applied'),
    note: Type.Union([Type.String(), Type.Null()], {
      description:
        'why the metric was not adjusted (ratio metrics, no pre-period variance), or, when applied, that the variance reduction is negligible (below 2%); null otherwise',
    }),
  },
  { description: 'CUPED variance reduction of this metric (docs/statistics.md)' },
);
export type CupedReport = Static<typeof CupedReportSchema>;
const Cuped = Type.Optional(
  Type.Union([CupedReportSchema, Type.Null()], {
    description: 'null when the experiment’s variance_reduction is off (absent in snapshots computed before CUPED existed)',
  }),
);

const MetricUnit = Type.Union([Type.String(), Type.Null()], {
  description: 'the metric’s display unit when the snapshot was computed (e.g. ms, USD); null for none (and in snapshots stored before units)',
});
const MetricName = Type.String({ description: 'the metric’s name when the snapshot was computed (its key in snapshots stored before names were carried)' });

export const AnalysedMetricSchema = Type.Object(
  {
    id: Id,
    key: Type.String(),
    name: MetricName,
    unit: MetricUnit,
    kind: MetricKind,
    aggregation: MetricAggregation,
    higher_is_better: HigherIsBetter,
    cap_applied: CapApplied,
    cuped: Cuped,
    quantile: Type.Optional(Type.Number({ description: 'quantile metrics only: q (0 < q < 1)' })),
    quantile_level: Type.Optional(Type.Enum(['event', 'unit'], { description: 'quantile metrics only: over every event’s number, or one value per unit' })),
  },
  { description: 'the metric per_variant reports' },
);
export type AnalysedMetric = Static<typeof AnalysedMetricSchema>;

export const SecondaryMetricSchema = Type.Object(
  { ...AnalysedMetricSchema.properties, per_variant: Type.Array(VariantPosteriorSchema) },
  { description: 'a goal beside the primary: the metric as primary_metric describes one, and its results per variant' },
);
export type SecondaryMetric = Static<typeof SecondaryMetricSchema>;

export const MultipleTestingReportSchema = Type.Object(
  {
    method: Type.Enum(['none', 'holm', 'benjamini_hochberg']),
    scope: Type.Enum(['goals', 'goals_and_guardrails']),
    family_size: Type.Integer({ description: 'p-values adjusted together: metrics in scope times non-control variants with an effect' }),
  },
  { description: 'the correction the adjusted_p_value fields carry (docs/statistics.md "Multiple testing")' },
);
export type MultipleTestingReport = Static<typeof MultipleTestingReportSchema>;

export const GuardrailSchema = Type.Object({
  metric_id: Id,
  metric_key: Type.String(),
  metric_name: MetricName,
  unit: MetricUnit,
  higher_is_better: HigherIsBetter,
  cap_applied: CapApplied,
  cuped: Cuped,
  per_variant: Type.Array(VariantPosteriorSchema),
});
export type Guardrail = Static<typeof GuardrailSchema>;

export const GuardrailRegressionSchema = Type.Object(
  {
    metric_id: Id,
    metric_key: Type.String(),
    metric_name: MetricName,
    variant_key: Type.String(),
    chance_to_beat_control: Type.Number({ description: 'below 0.05: the variant very likely makes this guardrail worse' }),
  },
  { description: 'a guardrail a non-control variant makes worse' },
);
export type GuardrailRegression = Static<typeof GuardrailRegressionSchema>;

export const TrafficSchema = Type.Object(
  {
    variant_key: Type.String(),
    weight: Type.Integer({ description: 'the variant’s weight when the snapshot was computed' }),
    exposed_units: Type.Integer({ description: 'units whose live exposure is in this variant' }),
  },
  { description: 'the counts the SRM check compares with the weights' },
);
export type Traffic = Static<typeof TrafficSchema>;

/** What a person should do now (docs/analysis.md "The recommendation"); the alerts compare these between snapshots. */
export const RECOMMENDATION_ACTIONS = ['ship', 'rollback', 'investigate', 'no_difference', 'keep_running'] as const;
export type RecommendationAction = (typeof RECOMMENDATION_ACTIONS)[number];

/** Every reason code a recommendation can give (docs/analysis.md lists what each means). */
export const RECOMMENDATION_REASON_CODES = [
  'no_exposures',
  'srm',
  'no_metric_events',
  'no_primary_metric',
  'control_won',
  'guardrail_regression',
  'below_min_sample',
  'rule_satisfied',
  'no_difference',
  'max_duration_reached',
  'rule_not_satisfied',
  'not_significant_after_correction',
] as const;
export type RecommendationReasonCode = (typeof RECOMMENDATION_REASON_CODES)[number];

export const RecommendationReasonSchema = Type.Object(
  {
    code: Type.Enum([...RECOMMENDATION_REASON_CODES], { description: 'stable, machine-readable (docs/analysis.md "Reason codes")' }),
    message: Type.String({ description: 'for a person: what was found, by metric and variant names, and what to do' }),
  },
  { description: 'one reason behind the recommendation' },
);
export type RecommendationReason = Static<typeof RecommendationReasonSchema>;

export const RecommendationSchema = Type.Object(
  {
    action: Type.Enum([...RECOMMENDATION_ACTIONS], {
      description:
        'ship: a variant won on the primary metric and every check passed; rollback: the control won, or the winner harms a guardrail; investigate: a check failed (SRM, no exposures, no events for a metric, no primary metric); no_difference: the rule found no difference, or the planned duration ended without a winner; keep_running: not enough units, or no rule satisfied yet',
    }),
    variant_key: Type.Union([Type.String(), Type.Null()], {
      description: 'the variant to give everyone: the winner for ship, the control for rollback; null otherwise',
    }),
    reasons: Type.Array(RecommendationReasonSchema, { minItems: 1, description: 'why, most decisive first' }),
  },
  { description: 'what to do, weighing the health checks before the effect; never ship while a check fails' },
);
export type Recommendation = Static<typeof RecommendationSchema>;

export const DecisionSchema = Type.Object(
  {
    verdict: Type.Enum(['keep_running', 'winner', 'no_difference', 'max_duration_reached']),
    variant_key: Type.Union([Type.String(), Type.Null()], { description: 'the winner, when verdict is winner' }),
    reason: Type.String({ description: 'why, in words' }),
    method: Type.Enum(['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt']),
    days_elapsed: Type.Number({ description: 'days from start to the computation (or to the stop)' }),
    always_valid_p_values: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
      description: 'always-valid rules: running minimum of each treatment’s p-value against control, carried from snapshot to snapshot',
    }),
    guardrail_regressions: Type.Array(GuardrailRegressionSchema, {
      description:
        'each guardrail and non-control variant whose chance_to_beat_control there is below 0.05, once every weighted variant reached min_sample_per_variant (empty before)',
    }),
    recommendation: RecommendationSchema,
  },
  { description: 'the decision rule’s verdict on the primary metric' },
);
export type SnapshotDecision = Static<typeof DecisionSchema>;

export const BreakdownValueSchema = Type.Object(
  {
    value: Type.String({
      description: 'the dimension value (the API key id for source), or "(other)" for the values beyond the top 20, or "(none)" for units without a value',
    }),
    label: Type.String({
      description: 'what to show for the value: for source, the API key’s name (its id when the key is gone); otherwise the value itself',
    }),
    units: Type.Integer({ description: 'live exposed units with this value, all variants' }),
    per_variant: Type.Array(VariantPosteriorSchema, {
      description: 'the primary metric per variant within the slice, with its effect against the control (sample sizes only without a primary metric)',
    }),
    srm_chi_squared_p: Type.Union([Type.Number(), Type.Null()], {
      description: 'sample-ratio mismatch p-value of the slice against the experiment’s weights; null when undefined',
    }),
    srm_warning: Type.Boolean({ description: 'srm_chi_squared_p < 0.001: this slice’s split does not match the weights' }),
    significant_after_correction: Type.Boolean({
      description:
        'some non-control variant’s effect in the slice stays significant after Holm’s correction (family-wise 5%) over every slice and variant of the snapshot, on p = 2·min(c, 1 − c) with c its chance_to_beat_control',
    }),
  },
  { description: 'one slice of a breakdown' },
);
export type BreakdownValue = Static<typeof BreakdownValueSchema>;

export const BreakdownSchema = Type.Object(
  {
    dimension: Type.String({ description: 'an experiment dimension, or "source" (the API key that logged the exposure)' }),
    values: Type.Array(BreakdownValueSchema, { description: 'the top 20 values by units (most first), then "(other)" and "(none)" when they have units' }),
  },
  { description: 'the results broken down by one dimension (docs/analysis.md)' },
);
export type Breakdown = Static<typeof BreakdownSchema>;

export const MetricBreakdownsSchema = Type.Object(
  {
    metric_id: Id,
    metric_key: Type.String(),
    metric_name: MetricName,
    role: Type.Enum(['guardrail', 'secondary'], { description: 'where the experiment lists the metric' }),
    breakdowns: Type.Array(BreakdownSchema, {
      description:
        'this metric per value of each dimension and of source, as breakdowns gives the primary metric; significant_after_correction is Holm’s over this metric’s own slices and variants',
    }),
  },
  { description: 'a guardrail or secondary metric broken down by the experiment’s dimensions' },
);
export type MetricBreakdowns = Static<typeof MetricBreakdownsSchema>;

export const ComputationSchema = Type.Object(
  {
    mode: Type.Enum(['incremental', 'full'], {
      description: 'incremental: the rollups were refreshed with what is new and aggregated; full: computed from all raw events, rollups untouched',
    }),
    events_read: Type.Integer({
      description:
        'raw event rows the computation read (incremental: the refresh’s new events and the events of units it rebuilt; full: the rows the main pass joined)',
    }),
    units_refreshed: Type.Integer({ description: 'units whose rollups the refresh rebuilt or updated (0 for a full computation)' }),
    duration_ms: Type.Number({ description: 'from the request to the snapshot, before it was stored' }),
    store: Type.Union([Type.Enum(['sqlite', 'postgres', 'clickhouse']), Type.Null()], {
      description:
        'where the sums were computed: the primary database (sqlite, postgres) or ClickHouse when VERDICT_CLICKHOUSE_URL is set (docs/analysis.md "ClickHouse"); null in snapshots computed before this field existed',
    }),
    warehouse: Type.Optional(WarehouseComputationSchema),
  },
  { description: 'how the snapshot was computed (docs/analysis.md "Incremental analysis")' },
);
export type Computation = Static<typeof ComputationSchema>;

export const ComputeQuery = Type.Object(
  {
    mode: Type.Optional(
      Type.Enum(['incremental', 'full'], {
        description:
          'incremental: refresh the rollups with what is new, then aggregate them; full: compute from all raw events, leaving the rollups alone. Default: incremental (docs/analysis.md). With ClickHouse every snapshot is computed in full there (its rollups are not built yet)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ComputeQuery = Static<typeof ComputeQuery>;

export const AnalysisSnapshotSchema = Type.Object(
  {
    id: Id,
    experiment_id: Id,
    computed_at: Timestamp,
    trigger: Type.Enum(['api', 'schedule', 'final', 'cli'], {
      description: 'api: POST .../results/compute; schedule: the cadence; final: after the experiment stopped; cli: verdict analyze',
    }),
    primary_metric: Type.Union([AnalysedMetricSchema, Type.Null()]),
    per_variant: Type.Array(VariantPosteriorSchema, { description: 'the primary metric per variant (sample sizes only without one)' }),
    secondary_metrics: Type.Array(SecondaryMetricSchema, {
      description: 'the experiment’s secondary_metric_ids, analysed like the primary metric (empty in snapshots computed before secondary metrics existed)',
    }),
    multiple_testing: Type.Union([MultipleTestingReportSchema, Type.Null()], {
      description: 'the correction applied over the goals (and guardrails when in scope); null in snapshots computed before it existed',
    }),
    guardrails: Type.Array(GuardrailSchema),
    traffic: Type.Array(TrafficSchema),
    decision_rule_satisfied: Type.Boolean({ description: 'the decision rule found a winner' }),
    decision: DecisionSchema,
    srm_chi_squared_p: NullableNumber('sample-ratio mismatch p-value (Pearson chi-squared); null when undefined'),
    srm_warning: Type.Boolean({ description: 'srm_chi_squared_p < 0.001: the split does not match the weights; distrust the results' }),
    peek_count_at_computation: Type.Integer({ description: 'results views through the admin UI logged up to the computation' }),
    late_event_count: Type.Integer({
      description:
        'events of the experiment’s metrics from exposed units received 7 to 30 days after they occurred, counted in a metric or not (late_events says which)',
    }),
    late_events: Type.Union(
      [
        Type.Object({
          counted: Type.Integer({
            description: 'inside the window of a metric with their key (before the stop): they count, and snapshots computed before they arrived lacked them',
          }),
          before_exposure: Type.Integer({
            description: 'occurred before their unit’s exposure (backfills): they count in no metric (CUPED may read them as the pre-period covariate)',
          }),
          outside_window: Type.Integer({
            description: 'after the exposure but outside every window of a metric with their key, or after the stop: they count in no metric',
          }),
        }),
        Type.Null(),
      ],
      { description: 'late_event_count split by what the events did to the results; null in snapshots stored before the split' },
    ),
    weights_changed_since_start: Type.Boolean(),
    breakdowns: Type.Array(BreakdownSchema, {
      description: 'the primary metric and SRM per value of each dimension, and of source (empty in snapshots computed before breakdowns existed)',
    }),
    metric_breakdowns: Type.Array(MetricBreakdownsSchema, {
      description:
        'the guardrails, then the secondary metrics, each broken down like breakdowns (empty in snapshots computed before these existed, and without dimensions only source)',
    }),
    computation: Type.Union([ComputationSchema, Type.Null()], { description: 'null in snapshots computed before incremental analysis existed' }),
    planning: Type.Union([PlanningBlockSchema, Type.Null()], {
      description: 'progress toward the planned sample and the MDE (docs/statistics.md section 9a); null in snapshots stored before planning existed',
    }),
  },
  { description: 'one computed analysis of an experiment (see docs/analysis.md)' },
);
export type AnalysisSnapshot = Static<typeof AnalysisSnapshotSchema>;

export const AnalysisSnapshotHistorySchema = Type.Object({
  experiment_id: Id,
  snapshots: Type.Array(AnalysisSnapshotSchema, { description: 'oldest first' }),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as cursor for the next (newer) page; null at the end' }),
});
export type AnalysisSnapshotHistory = Static<typeof AnalysisSnapshotHistorySchema>;

/** The API's list maximum; 28 days at the default 240-minute cadence is 168 snapshots, one page. */
export const MAX_HISTORY_PAGE = MAX_PAGE_SIZE;
export const DEFAULT_HISTORY_PAGE = MAX_PAGE_SIZE;

export const HistoryQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY_PAGE, default: DEFAULT_HISTORY_PAGE, description: 'page size' })),
    cursor: Type.Optional(Type.String({ maxLength: 512, description: 'opaque cursor from next_cursor' })),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'only snapshots computed at or after this time' })),
    fields: Type.Optional(
      Type.Enum(['full', 'summary'], {
        default: 'full',
        description: 'full: every snapshot whole; summary: per snapshot only the recommendation and each variant’s primary-metric effect and sample size',
      }),
    ),
  },
  { additionalProperties: false },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

export const ResultsParams = Type.Object({ id: Type.String() });

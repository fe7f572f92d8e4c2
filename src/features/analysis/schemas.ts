import Type, { type Static } from 'typebox';
import { MAX_PAGE_SIZE } from '../../http/pagination.js';
import { Id, Timestamp } from '../../http/schemas.js';

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

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
      'E[max(best other variant - this variant, 0)] on the metric scale: what choosing this variant now would forgo; null when undefined',
    ),
  },
  { description: 'one variant of one metric: the spec’s VariantPosterior' },
);
export type VariantPosterior = Static<typeof VariantPosteriorSchema>;

const MetricKind = Type.Enum(['binary', 'count', 'revenue', 'duration']);
const MetricAggregation = Type.Enum(['sum', 'mean', 'count']);

export const AnalysedMetricSchema = Type.Object(
  { id: Id, key: Type.String(), kind: MetricKind, aggregation: MetricAggregation },
  { description: 'the metric per_variant reports' },
);

export const GuardrailSchema = Type.Object({
  metric_id: Id,
  metric_key: Type.String(),
  per_variant: Type.Array(VariantPosteriorSchema),
});
export type Guardrail = Static<typeof GuardrailSchema>;

export const TrafficSchema = Type.Object(
  {
    variant_key: Type.String(),
    weight: Type.Integer({ description: 'the variant’s weight when the snapshot was computed' }),
    exposed_units: Type.Integer({ description: 'units whose live exposure is in this variant' }),
  },
  { description: 'the counts the SRM check compares with the weights' },
);
export type Traffic = Static<typeof TrafficSchema>;

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
  },
  { description: 'the decision rule’s verdict on the primary metric' },
);
export type SnapshotDecision = Static<typeof DecisionSchema>;

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
    guardrails: Type.Array(GuardrailSchema),
    traffic: Type.Array(TrafficSchema),
    decision_rule_satisfied: Type.Boolean({ description: 'the decision rule found a winner' }),
    decision: DecisionSchema,
    srm_chi_squared_p: NullableNumber('sample-ratio mismatch p-value (Pearson chi-squared); null when undefined'),
    srm_warning: Type.Boolean({ description: 'srm_chi_squared_p < 0.001: the split does not match the weights; distrust the results' }),
    peek_count_at_computation: Type.Integer({ description: 'results views through the admin UI logged up to the computation' }),
    late_event_count: Type.Integer({ description: 'events of the experiment’s metrics from exposed units received 7 to 30 days after they occurred' }),
    weights_changed_since_start: Type.Boolean(),
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
  },
  { additionalProperties: false },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

export const ResultsParams = Type.Object({ id: Type.String() });

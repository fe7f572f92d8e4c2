/** Request and response of POST /v1/planning/power (docs/experiments.md "Planning"). */
import Type, { type Static } from 'typebox';
import { Id } from '../../http/schemas.js';
import { DecisionRuleInput, VarianceReductionInput, VARIANT_KEY_PATTERN } from '../experiments/schemas.js';

export const HISTORY_DAYS = { minimum: 1, maximum: 90, default: 14 } as const;
export const MAX_HORIZON_DAYS = 365;

export const PlanVariantInput = Type.Object(
  {
    key: Type.String({ pattern: VARIANT_KEY_PATTERN }),
    weight: Type.Integer({ minimum: 0, maximum: 100, description: 'percent of the experiment’s traffic; all weights sum to 100' }),
    is_control: Type.Optional(Type.Boolean({ description: 'the control; the first variant when none is marked' })),
  },
  { additionalProperties: false },
);

export const GivenBaseline = Type.Object(
  {
    mean: Type.Number({ description: 'per-unit mean of the control: the conversion rate of a binary metric' }),
    variance: Type.Number({ minimum: 0, description: 'per-unit variance of the control: p (1 - p) of a binary metric' }),
  },
  { additionalProperties: false, description: 'a baseline to plan with instead of the metric’s history (every metric of the request)' },
);

export const PlanningPowerInput = Type.Object(
  {
    environment_id: Id,
    variants: Type.Array(PlanVariantInput, { minItems: 2, maxItems: 20 }),
    decision_rule: Type.Optional(DecisionRuleInput),
    metric_ids: Type.Array(Id, { minItems: 1, maxItems: 10, description: 'the metrics to plan for; the first is the one the answer in words is about' }),
    minimum_detectable_effect: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 10,
        description: 'relative lift to detect (0.02 is 2%); becomes the rule’s minimum_detectable_effect. Give it or duration_days; neither: the rule’s',
      }),
    ),
    duration_days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HORIZON_DAYS, description: 'plan for this many days: the MDE reachable then' })),
    daily_units: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'new units a day entering the experiment; from history when absent' })),
    coverage: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 100,
        description: 'percent of the environment’s traffic the experiment gets (default 100); applies to traffic from history',
      }),
    ),
    baseline: Type.Optional(GivenBaseline),
    history_days: Type.Optional(Type.Integer({ ...HISTORY_DAYS, description: 'days of history the baselines and traffic come from (default 14)' })),
    audience: Type.Optional(
      Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description: 'the experiment’s audience: history keeps no unit attributes, so with an audience give daily_units and baseline',
      }),
    ),
    variance_reduction: Type.Optional(VarianceReductionInput),
    power: Type.Optional(Type.Number({ minimum: 0.5, maximum: 0.99, description: 'the power to plan for (default 0.8)' })),
    horizon_days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HORIZON_DAYS, description: 'days the by-day series cover' })),
  },
  { additionalProperties: false },
);
export type PlanningPowerInput = Static<typeof PlanningPowerInput>;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

export const PlannedBaseline = Type.Object({
  mean: Type.Number(),
  variance: Type.Number({ description: 'per-unit variance the plan uses: CUPED-adjusted when variance_reduction is CUPED' }),
  units: Nullable(Type.Integer({ description: 'units of history it rests on; null for a given baseline' })),
  events: Nullable(Type.Integer({ description: 'events of history it rests on; null for a given baseline' })),
  source: Type.Enum(['history', 'given']),
  variance_reduction: Nullable(Type.Number({ description: 'CUPED: 1 - adjusted / plain variance over the history; null without' })),
});

export const MetricPlanSchema = Type.Object({
  metric_id: Id,
  metric_name: Type.String(),
  baseline: PlannedBaseline,
  minimum_detectable_effect: Nullable(Type.Number({ description: 'the MDE planned for: given, the rule’s, or reachable in duration_days' })),
  units_per_variant: Nullable(Type.Integer({ description: 'units the smallest variant needs (each variant with equal weights); null above a billion' })),
  total_units: Nullable(Type.Integer({ description: 'units of every variant together then' })),
  days_needed: Nullable(Type.Integer({ description: 'days of traffic until then; null without traffic or estimate' })),
  mde_by_day: Type.Array(Type.Object({ day: Type.Integer(), mde: Nullable(Type.Number()) }), {
    description: 'MDE reachable with the planned power after each day',
  }),
  power_by_day: Type.Array(Type.Object({ day: Type.Integer(), power: Type.Number() }), { description: 'power for the planned MDE after each day' }),
});

export const PlanningPowerSchema = Type.Object({
  metrics: Type.Array(MetricPlanSchema),
  daily_units: Type.Object({
    value: Type.Number({ description: 'new units a day entering the experiment' }),
    source: Type.Enum(['history', 'given']),
    history_units: Nullable(Type.Integer({ description: 'distinct units seen in the history; null when given' })),
  }),
  decision_rule: Type.Object({
    method: Type.String(),
    posterior_threshold: Type.Number(),
    minimum_detectable_effect: Type.Number(),
    min_sample_per_variant: Type.Integer(),
    max_duration_days: Type.Integer(),
    snapshot_cadence_minutes: Type.Integer(),
  }),
  power: Type.Number(),
  history: Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }), days: Type.Integer() }),
  summary: Type.String({ description: 'the answer in words, about the first metric' }),
});
export type PlanningPower = Static<typeof PlanningPowerSchema>;

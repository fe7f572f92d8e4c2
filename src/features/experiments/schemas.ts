import Type, { type Static } from 'typebox';
import { ID_PATTERN, Id, ListOf, NullableTimestamp, PageQuery, Timestamp } from '../../http/schemas.js';
import { DEFAULT_DECISION_RULE as STATS_DEFAULT_DECISION_RULE } from '../../stats/index.js';
import { AllocationInput, AllocationPeriods, AllocationSchema } from './allocation.js';
import { MultipleTestingInput, MultipleTestingSchema, SecondaryMetricIds } from './multiple-testing.js';
import { OwnerInput, OwnerSchema, TagsInput } from './labels.js';
import { ExperimentWarningSchema } from './warnings.js';

export const KEY_PATTERN = '^[a-z0-9._-]{1,128}$';
export const VARIANT_KEY_PATTERN = '^[a-z0-9._-]{1,64}$';

export const UnitType = Type.Enum(['user', 'account', 'session', 'device', 'custom_attribute'], {
  description: 'what a unit id identifies',
});
export const ExperimentStatus = Type.Enum(['draft', 'running', 'stopped', 'archived']);
export const StopReason = Type.Enum(['won', 'lost', 'inconclusive', 'bug', 'business']);
export const DecisionMethod = Type.Enum(['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt']);

export const DecisionRuleInput = Type.Object(
  {
    method: Type.Optional(DecisionMethod),
    posterior_threshold: Type.Optional(Type.Number({ minimum: 0.5, maximum: 0.9999 })),
    minimum_detectable_effect: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 10, description: 'relative to the control mean' })),
    min_sample_per_variant: Type.Optional(Type.Integer({ minimum: 1 })),
    max_duration_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
    snapshot_cadence_minutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 10080 })),
  },
  { additionalProperties: false, description: 'every field optional; defaults fill the rest' },
);

export const DecisionRuleSchema = Type.Object({
  method: DecisionMethod,
  posterior_threshold: Type.Number(),
  minimum_detectable_effect: Type.Number(),
  min_sample_per_variant: Type.Integer(),
  max_duration_days: Type.Integer(),
  snapshot_cadence_minutes: Type.Integer(),
});
export type DecisionRule = Static<typeof DecisionRuleSchema>;

/** The spec's defaults, owned by the statistics that apply them (stats/decision.ts). */
export const DEFAULT_DECISION_RULE: DecisionRule = STATS_DEFAULT_DECISION_RULE;

export const VariantInput = Type.Object(
  {
    key: Type.String({ pattern: VARIANT_KEY_PATTERN }),
    weight: Type.Integer({ minimum: 0, maximum: 100, description: 'percent of traffic; all weights sum to 100' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    is_control: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type VariantInput = Static<typeof VariantInput>;

export const VariantSchema = Type.Object({
  id: Id,
  key: Type.String(),
  weight: Type.Integer(),
  is_control: Type.Boolean(),
  description: Type.Optional(Type.String()),
});
export type Variant = Static<typeof VariantSchema>;

const Audience = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
  description: 'audience expression tree (see docs/assignment.md), or null for everyone',
});

/** CUPED lookback bounds and default (docs/statistics.md "2b. CUPED variance reduction"). */
export const CUPED_LOOKBACK_DAYS = { minimum: 1, maximum: 60, default: 14 } as const;

export const VarianceReductionInput = Type.Union(
  [
    Type.Object(
      {
        method: Type.Literal('cuped'),
        lookback_days: Type.Optional(
          Type.Integer({ ...CUPED_LOOKBACK_DAYS, description: 'days before each unit’s first exposure whose events form its pre-period covariate' }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'CUPED variance reduction (docs/statistics.md), or null for none' },
);

export const VarianceReductionSchema = Type.Union([Type.Object({ method: Type.Literal('cuped'), lookback_days: Type.Integer() }), Type.Null()], {
  description: 'CUPED variance reduction with its lookback, or null when off',
});
export type VarianceReduction = Static<typeof VarianceReductionSchema>;
export const AutoStopInput = Type.Object(
  {
    on_recommendation: Type.Optional(
      Type.Boolean({
        description:
          'stop when the recommendation is ship (reason won), rollback (lost) or no_difference (inconclusive); only with an always-valid decision rule',
      }),
    ),
    on_guardrail_regression: Type.Optional(
      Type.Boolean({ description: 'stop (reason lost) when a guardrail regresses, once every variant has min_sample_per_variant units' }),
    ),
    on_srm: Type.Optional(Type.Boolean({ description: 'stop (reason bug) when a sample-ratio mismatch is detected' })),
  },
  { additionalProperties: false, description: 'automatic stops; omitted switches are off (docs/experiments.md "Auto-stop")' },
);
export type AutoStopInput = Static<typeof AutoStopInput>;

export const AutoStopSchema = Type.Object(
  { on_recommendation: Type.Boolean(), on_guardrail_regression: Type.Boolean(), on_srm: Type.Boolean() },
  { description: 'which conditions stop the experiment automatically, in the transaction that stores the snapshot that meets them' },
);
export type AutoStop = Static<typeof AutoStopSchema>;

export const MAX_DIMENSIONS = 5;

const Dimensions = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: MAX_DIMENSIONS,
  uniqueItems: true,
  description:
    'attribute names of the assign context to break results down by (at most 5, each at most 64 characters; not "source", which is always broken down). Read from the first assignment of each unit: a dimension added while running applies to units assigned afterwards.',
});

const experimentInputFields = {
  environment_id: Id,
  key: Type.String({ pattern: KEY_PATTERN }),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  hypothesis: Type.String({ minLength: 1, maxLength: 5000 }),
  unit_type: UnitType,
  variants: Type.Array(VariantInput, { minItems: 2, maxItems: 20 }),
  audience: Type.Optional(Audience),
  decision_rule: Type.Optional(DecisionRuleInput),
  primary_metric_id: Type.Optional(Type.Union([Id, Type.Null()])),
  guardrail_metric_ids: Type.Optional(Type.Array(Id, { maxItems: 20, uniqueItems: true })),
  secondary_metric_ids: Type.Optional(SecondaryMetricIds),
  multiple_testing: Type.Optional(MultipleTestingInput),
  mutex_group_id: Type.Optional(Type.Union([Id, Type.Null()])),
  variance_reduction: Type.Optional(VarianceReductionInput),
  dimensions: Type.Optional(Dimensions),
  allocation: Type.Optional(AllocationInput),
  auto_stop: Type.Optional(AutoStopInput),
  tags: Type.Optional(TagsInput),
  owner: Type.Optional(OwnerInput),
};

export const ExperimentInput = Type.Object(experimentInputFields, { additionalProperties: false });
export type ExperimentInput = Static<typeof ExperimentInput>;

/** A new experiment's body: ExperimentInput, whose unit type and variants a template may give. */
export const ExperimentCreateInput = Type.Object(
  {
    ...experimentInputFields,
    unit_type: Type.Optional(UnitType),
    variants: Type.Optional(experimentInputFields.variants),
    template_id: Type.Optional(
      Type.String({
        pattern: ID_PATTERN,
        description:
          'an experiment template of the workspace (GET /v1/experiment-templates) whose fields fill those this body leaves out; unit_type and variants are required without one that has them',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExperimentCreateInput = Static<typeof ExperimentCreateInput>;

export const ExperimentPatch = Type.Partial(Type.Object(experimentInputFields, { additionalProperties: false }), {
  additionalProperties: false,
  description: 'any subset of ExperimentInput; see the lifecycle rules for what may change while running',
});
export type ExperimentPatch = Static<typeof ExperimentPatch>;

export const ExperimentSchema = Type.Object({
  id: Id,
  workspace_id: Id,
  environment_id: Id,
  key: Type.String(),
  name: Type.String(),
  hypothesis: Type.String(),
  unit_type: UnitType,
  status: ExperimentStatus,
  variants: Type.Array(VariantSchema),
  audience: Audience,
  decision_rule: DecisionRuleSchema,
  primary_metric_id: Type.Union([Type.String(), Type.Null()]),
  guardrail_metric_ids: Type.Array(Type.String()),
  secondary_metric_ids: Type.Array(Type.String(), { description: 'goal metrics beside the primary' }),
  multiple_testing: MultipleTestingSchema,
  mutex_group_id: Type.Union([Type.String(), Type.Null()]),
  variance_reduction: VarianceReductionSchema,
  dimensions: Type.Array(Type.String(), { description: 'attribute names whose values from the first assignment break the results down' }),
  allocation: AllocationSchema,
  allocation_periods: AllocationPeriods,
  auto_stop: AutoStopSchema,
  tags: Type.Array(Type.String(), { description: 'tags, in lower case' }),
  owner: OwnerSchema,
  weights_changed_since_start: Type.Boolean(),
  started_at: NullableTimestamp,
  stopped_at: NullableTimestamp,
  stop_reason: Type.Union([StopReason, Type.Null()]),
  outcome_notes: Type.Union([Type.String(), Type.Null()]),
  stopped_by: Type.Union([Type.Enum(['key', 'person', 'auto']), Type.Null()], {
    description:
      'who stopped it: key (an API key), person (through the admin UI) or auto (an auto_stop condition; see stop_snapshot_id); null while not stopped, and for experiments stopped before Verdict recorded it',
  }),
  stop_snapshot_id: Type.Union([Type.String(), Type.Null()], {
    description: 'the snapshot that stopped it, when stopped_by is auto (GET /v1/experiments/{id}/results/history lists it); else null',
  }),
  launched_variant_key: Type.Union([Type.String(), Type.Null()], {
    description: 'the variant a stopped experiment keeps serving to every unit (reason launched) until it is archived; null when none was launched',
  }),
  launched_at: NullableTimestamp,
  launch_reason: Type.Union([Type.String(), Type.Null()], { description: 'why the variant was launched, as given; null when none was given' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  warnings: Type.Array(ExperimentWarningSchema, {
    description: 'planning warnings computed from the current settings (e.g. underpowered); empty when none',
  }),
});
export type Experiment = Static<typeof ExperimentSchema>;

export const StopExperimentInput = Type.Object(
  {
    reason: StopReason,
    outcome_notes: Type.Optional(Type.String({ maxLength: 5000 })),
    launch_variant_key: Type.Optional(
      Type.String({
        pattern: VARIANT_KEY_PATTERN,
        description: 'launch this variant in the same step (POST /v1/experiments/{id}/launch); 422 when the experiment has no such variant',
      }),
    ),
  },
  { additionalProperties: false },
);
export type StopExperimentInput = Static<typeof StopExperimentInput>;

export const ExperimentListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(ExperimentStatus),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'only experiments whose name or key contains this text (any case)' })),
    order: Type.Optional(
      Type.Enum(['oldest', 'newest', 'updated', 'name'], {
        default: 'oldest',
        description:
          'oldest first (the default), newest first, most recently changed first (updated_at), or by name: A-Z folded to a-z and nothing else, in code-point order, ties oldest first; the same order on every database',
      }),
    ),
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 400 }), {
        maxItems: 10,
        description: 'only experiments with every one of these tags (any case); repeat the parameter or separate tags with commas',
      }),
    ),
    owner: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'only experiments of this owner: a person’s id, or the owner’s name (any case)' }),
    ),
  },
  { additionalProperties: false },
);

export const DuplicateExperimentInput = Type.Object(
  {
    key: Type.String({ pattern: '^[a-z0-9._-]{1,128}$', description: 'the new experiment’s key (keys are unique in the workspace)' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'default: "Copy of" and the name' })),
  },
  { additionalProperties: false },
);
export type DuplicateExperimentInput = Static<typeof DuplicateExperimentInput>;
export const ExperimentList = ListOf(ExperimentSchema, 'experiments, oldest first');
export const ExperimentParams = Type.Object({ id: Type.String() });

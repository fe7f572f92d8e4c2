import Type, { type Static } from 'typebox';
import { Id, ListOf, NullableTimestamp, PageQuery, Timestamp } from '../../http/schemas.js';
import { UnitType, VarianceReductionInput, VarianceReductionSchema } from '../experiments/schemas.js';

export const HoldoutStatus = Type.Enum(['draft', 'running', 'ended', 'archived']);

export const PERCENT_RANGE = { minimum: 0.5, maximum: 20 } as const;

const Percent = Type.Number({
  ...PERCENT_RANGE,
  description: 'percent of the environment’s units held out, 0.5 to 20, in steps of 0.01 (a unit is held out when its bucket of 10,000 is below percent × 100)',
});
const ExperimentIds = Type.Array(Id, {
  minItems: 1,
  maxItems: 200,
  uniqueItems: true,
  description: 'the experiments it covers; omit (or null) to cover every experiment started in the environment after the holdout starts',
});

const holdoutFields = {
  environment_id: Id,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])),
  unit_type: UnitType,
  percent: Percent,
  experiment_ids: Type.Optional(Type.Union([ExperimentIds, Type.Null()])),
  metric_ids: Type.Optional(
    Type.Array(Id, {
      maxItems: 20,
      uniqueItems: true,
      description:
        'the metrics the holdout’s snapshots analyse (held-out units against the equal-size sample); each metric’s window must fit in the holdout’s run',
    }),
  ),
  variance_reduction: Type.Optional(VarianceReductionInput),
};

export const HoldoutInput = Type.Object(holdoutFields, { additionalProperties: false });
export type HoldoutInput = Static<typeof HoldoutInput>;

export const HoldoutPatch = Type.Partial(Type.Object(holdoutFields, { additionalProperties: false }), {
  additionalProperties: false,
  description: 'any subset of HoldoutInput while a draft; while running, name, description, a larger percent, metric_ids and variance_reduction only',
});
export type HoldoutPatch = Static<typeof HoldoutPatch>;

export const HoldoutSchema = Type.Object({
  id: Id,
  workspace_id: Id,
  environment_id: Id,
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  unit_type: UnitType,
  percent: Type.Number(),
  coverage: Type.Enum(['started_after', 'listed'], {
    description: 'started_after: every experiment started in the environment after the holdout; listed: experiment_ids',
  }),
  experiment_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
  metric_ids: Type.Array(Type.String(), { description: 'the metrics its snapshots analyse' }),
  variance_reduction: VarianceReductionSchema,
  status: HoldoutStatus,
  started_at: NullableTimestamp,
  ended_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Holdout = Static<typeof HoldoutSchema>;

export const CoveredExperimentSchema = Type.Object({
  id: Id,
  key: Type.String(),
  name: Type.String(),
  status: Type.String(),
  started_at: NullableTimestamp,
  stopped_at: NullableTimestamp,
  launched_variant_key: Type.Union([Type.String(), Type.Null()]),
  launched_at: NullableTimestamp,
});

export const OptedOutExperimentSchema = Type.Object({ id: Id, key: Type.String(), name: Type.String(), reason: Type.String(), opted_out_at: Timestamp });

export const HoldoutExperiments = Type.Object({
  covered: Type.Array(CoveredExperimentSchema, { description: 'experiments the holdout covers (archived ones included), by start date' }),
  opted_out: Type.Array(OptedOutExperimentSchema, { description: 'experiments it would cover but that opted out' }),
});

export const ExperimentHoldouts = Type.Object({
  holdouts: Type.Array(Type.Object({ id: Id, name: Type.String(), percent: Type.Number(), status: HoldoutStatus }), {
    description: 'the running holdouts that keep their units on this experiment’s control',
  }),
  opt_out: Type.Union([Type.Object({ reason: Type.String(), created_at: Timestamp }), Type.Null()]),
});

export const OptOutInput = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 2000, description: 'why this experiment must reach held-out units too' }) },
  { additionalProperties: false },
);
export type OptOutInput = Static<typeof OptOutInput>;

export const HoldoutList = ListOf(HoldoutSchema, 'holdouts, oldest first');
export const HoldoutListQuery = Type.Object({ ...PageQuery, status: Type.Optional(HoldoutStatus) }, { additionalProperties: false });
export const HoldoutParams = Type.Object({ id: Type.String() });

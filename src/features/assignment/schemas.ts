import Type, { type Static } from 'typebox';
import { NullableTimestamp, Timestamp } from '../../http/schemas.js';
import { UNIT_ID_MAX_CHARACTERS, unitIdSchema } from './unit-id.js';

const ExperimentKey = Type.String({ pattern: '^[a-z0-9._-]{1,128}$' });
const UnitId = unitIdSchema('the unit being assigned (user id, account id, ...)');
const UnitIdInPath = unitIdSchema(`the unit id, percent-encoded; the same 1 to ${UNIT_ID_MAX_CHARACTERS} characters the assign body accepts`);
const Context = Type.Record(Type.String(), Type.Unknown(), { description: 'attributes for audience targeting; at most 4 KB of JSON' });
const LogExposure = Type.Boolean({
  default: true,
  description: 'log the exposure now (default); send false when the variant is shown later, then POST /v1/exposures',
});

export const AssignInput = Type.Object(
  { experiment_key: ExperimentKey, unit_id: UnitId, context: Type.Optional(Context), log_exposure: Type.Optional(LogExposure) },
  { additionalProperties: false },
);
export type AssignInput = Static<typeof AssignInput>;

export const AssignBatchInput = Type.Object(
  {
    experiments: Type.Array(ExperimentKey, { minItems: 1, maxItems: 50, uniqueItems: true }),
    unit_id: UnitId,
    context: Type.Optional(Context),
    log_exposure: Type.Optional(LogExposure),
  },
  { additionalProperties: false },
);
export type AssignBatchInput = Static<typeof AssignBatchInput>;

export const AssignmentReason = Type.Enum(['bucketed', 'forced', 'mutex_holdout', 'audience_excluded', 'launched', 'holdout'], {
  description:
    'bucketed: stored by hashing; forced: a QA override; mutex_holdout: claimed by another experiment of its mutex group; audience_excluded: outside the audience; launched: the variant a stopped experiment launched; holdout: held out by a holdout (the control)',
});

export const AssignmentSchema = Type.Object({
  experiment_key: Type.String(),
  unit_id: Type.String(),
  variant: Type.Union([Type.String(), Type.Null()], { description: 'null for a mutex holdout or an excluded unit' }),
  reason: AssignmentReason,
  assignment_id: Type.Optional(Type.String({ description: 'present when the assignment is stored (sticky)' })),
  holdout_id: Type.Optional(Type.String({ description: 'with reason holdout: the holdout that keeps the unit on the control' })),
  exposure_logged_at: Type.Optional(NullableTimestamp),
});
export type Assignment = Static<typeof AssignmentSchema>;

export const AssignBatchResult = Type.Object({
  assignments: Type.Record(Type.String(), AssignmentSchema),
  not_found: Type.Array(Type.String(), { description: 'requested keys with no running experiment (omitted from assignments)' }),
});

export const AssignmentList = Type.Object({ unit_id: Type.String(), assignments: Type.Array(AssignmentSchema) });
export const UnitParams = Type.Object({ unit_id: UnitIdInPath });
export const RebucketParams = Type.Object({
  experiment: Type.String({ description: 'experiment id or key' }),
  unit_id: UnitIdInPath,
});

export const ExposureInput = Type.Object(
  { experiment_key: ExperimentKey, unit_id: UnitId, variant: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export type ExposureInput = Static<typeof ExposureInput>;

export const OverrideInput = Type.Object({ variant: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const OverrideSchema = Type.Object({ experiment_id: Type.String(), unit_id: Type.String(), variant: Type.String(), created_at: Timestamp });
export const OverrideParams = Type.Object({ id: Type.String(), unit_id: UnitIdInPath });

export const CONTEXT_LIMIT_BYTES = 4096;

import Type, { type Static } from 'typebox';
import { Id, Timestamp } from '../../../http/schemas.js';
import { CupedReportSchema, EffectSchema, MultipleTestingReportSchema, VariantPosteriorSchema } from '../../analysis/schemas.js';
import { CoveredExperimentSchema } from '../schemas.js';

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

const GroupSchema = Type.Object({
  key: Type.Enum(['held_out', 'sample'], { description: 'held_out: the holdout’s units (the control); sample: the equal-size sample of everyone else' }),
  units: Type.Integer({ description: 'units of the group with a first contact in the holdout’s run' }),
  expected_share: Type.Number({ description: 'the share of all units the group should hold (the SRM check’s weight)' }),
});

const HoldoutMetricSchema = Type.Object({
  id: Id,
  key: Type.String(),
  name: Type.String(),
  unit: Type.Union([Type.String(), Type.Null()]),
  kind: Type.String(),
  aggregation: Type.String(),
  higher_is_better: Type.Boolean(),
  window_days: Type.Number({ description: 'the metric’s window after each unit’s first contact (shorter than the holdout’s run)' }),
  cap_applied: NullableNumber('the absolute cap each unit’s value was held to; null when uncapped (a percentile cap is not applied to a holdout)'),
  cuped: Type.Union([CupedReportSchema, Type.Null()], { description: 'null when the holdout’s variance_reduction is off' }),
  per_group: Type.Array(VariantPosteriorSchema, { description: 'held_out (the control) first, then sample' }),
  cumulative_lift: Type.Union([EffectSchema, Type.Null()], {
    description: 'the sample against the held-out units: what everything launched while the holdout ran added up to; null while a group has too few units',
  }),
});

const LaunchSchema = Type.Object({
  experiment_id: Id,
  experiment_key: Type.String(),
  variant_key: Type.String(),
  launched_at: Timestamp,
});

export const HoldoutSnapshotSchema = Type.Object(
  {
    id: Id,
    holdout_id: Id,
    computed_at: Timestamp,
    period: Type.Object(
      { from: Timestamp, to: Timestamp },
      { description: 'the holdout’s run analysed: from its start to its end, or to the computation while it runs; events outside count nowhere' },
    ),
    percent: Type.Number({ description: 'the holdout’s percentage when computed' }),
    groups: Type.Array(GroupSchema),
    srm_chi_squared_p: NullableNumber('p-value of the chi-squared test of the group sizes against their expected shares'),
    srm_warning: Type.Boolean({ description: 'true when srm_chi_squared_p < 0.001' }),
    metrics: Type.Array(HoldoutMetricSchema, { description: 'the holdout’s metric_ids, in order' }),
    multiple_testing: MultipleTestingReportSchema,
    covered_experiments: Type.Array(CoveredExperimentSchema, { description: 'the experiments the holdout covers, by start date' }),
    launches: Type.Array(LaunchSchema, { description: 'launches of covered experiments while the holdout ran, oldest first: what cumulative_lift measures' }),
    computation: Type.Object({
      store: Type.String(),
      events_read: Type.Integer(),
      duration_ms: Type.Integer(),
    }),
  },
  {
    description: 'a holdout’s snapshot: its held-out units against an equal-size sample of the covered population (docs/statistics.md "The holdout estimate")',
  },
);
export type HoldoutSnapshot = Static<typeof HoldoutSnapshotSchema>;

export const HoldoutSnapshotParams = Type.Object({ id: Type.String() });

/** The schema of a snapshot's `planning` block (compute/planning-block.ts computes it). */
import Type, { type Static } from 'typebox';

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const PlanningBlockSchema = Type.Object(
  {
    days_elapsed: Type.Number({ description: 'days from the start to the computation (or to the stop)' }),
    daily_units: NullableNumber('exposed units a day so far, every variant together; null before any unit or time'),
    days_remaining: NullableNumber(
      'days until every weighted variant holds min_sample_per_variant units at the traffic seen so far; 0 once it does; null without traffic',
    ),
    mde_at_current_sample: NullableNumber(
      'the relative lift the decision rule detects with 80% power at the current sample, from the control’s own mean and variance; null without a primary metric or baseline',
    ),
    expected_days_to_mde: NullableNumber(
      'days from now until the sample lets the rule detect its minimum_detectable_effect with 80% power, at the traffic seen so far; 0 once it does; null when unknown',
    ),
  },
  { description: 'progress toward the planned sample and the MDE; null in snapshots stored before planning existed' },
);
export type PlanningBlock = Static<typeof PlanningBlockSchema>;

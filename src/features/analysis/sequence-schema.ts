/** A funnel's steps in a snapshot (docs/metrics.md "Funnel metrics"): each variant's units at each step, with the drop-off. */
import Type, { type Static } from 'typebox';

const NullableNumber = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Interval = Type.Tuple([Type.Number(), Type.Number()]);

export const FunnelStepResultSchema = Type.Object(
  {
    event_key: Type.String({ description: 'the step’s event' }),
    conversions: Type.Integer({ description: 'units that completed this step and every one before it, in order, within the window' }),
    rate: NullableNumber('conversions / sample_size: the share of the variant’s units that got this far; null without units'),
    rate_interval_95: Type.Union([Interval, Type.Null()], {
      description: '2.5% and 97.5% quantiles of the Beta(1 + conversions, 1 + sample_size − conversions) posterior of rate; null without units',
    }),
    step_rate: NullableNumber(
      'conversions / the previous step’s conversions (the first step: / sample_size): the share that went on from the step before; null when none reached it',
    ),
    step_rate_interval_95: Type.Union([Interval, Type.Null()], {
      description: 'the same Beta posterior interval for step_rate; null when none reached the previous step',
    }),
  },
  { description: 'one step of a funnel in one variant: the drop-off from the step before' },
);
export type FunnelStepResult = Static<typeof FunnelStepResultSchema>;

/** What a variant carries for the metric kinds that are not sums: a quantile metric's quantile, a funnel's steps (docs/metrics.md). */
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

export const QuantileResultSchema = Type.Object(
  {
    q: Type.Number({ description: 'the quantile (0 < q < 1)' }),
    level: Type.Enum(['event', 'unit']),
    value: NullableNumber('the sample quantile of the values (numpy’s default linear interpolation); null without values'),
    values: Type.Integer({ description: 'values it was taken over: events at the event level, units at the unit level' }),
    units: Type.Integer({ description: 'units contributing a value (the clusters at the event level)' }),
    interval_95: Type.Union([Type.Tuple([Type.Number(), Type.Number()]), Type.Null()], {
      description:
        'the order-statistic interval of the quantile: the values at q ∓ 1.96 σ of the empirical distribution function (delta method over units at the event level)',
    }),
    standard_error: NullableNumber('the interval’s half width over 1.96: what the effect’s delta method reads; null with fewer than 2 values'),
  },
  { description: 'quantile metrics: the variant’s quantile (docs/statistics.md "Quantile metrics")' },
);

import Type, { type Static } from 'typebox';
import { ID_PATTERN, Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';
import { DEFAULT_DEDUP_WINDOW } from './dedup-window.js';

export const KEY_PATTERN = '^[a-z0-9._-]{1,128}$';

const MetricKind = Type.Enum(['binary', 'count', 'revenue', 'duration', 'ratio', 'quantile'], {
  description:
    'binary: did the unit convert; count, revenue, duration: a per-unit number; ratio: sum of a numerator metric over sum of a denominator metric; quantile: the q-quantile of the numbers at property_path',
});
const Quantile = Type.Number({ description: 'quantile metrics: q, strictly between 0 and 1 (0.9 is the 90th percentile, p90)' });
const quantileLevelDescription =
  'quantile metrics: event, over every counted event’s number (units are clusters); unit, over one value per unit (its sum or mean, as aggregation says)';
const QuantileLevel = Type.Enum(['event', 'unit'], { description: quantileLevelDescription });
const aggregationOptions = {
  description: 'how a unit’s events in its window become one value: count them, or sum / average the number at property_path (ratio metrics: sum)',
};
const MetricAggregation = Type.Enum(['sum', 'mean', 'count'], aggregationOptions);
const DedupWindow = Type.String({
  maxLength: 64,
  default: DEFAULT_DEDUP_WINDOW,
  description: 'ISO 8601 duration of fixed length (weeks, days, hours, minutes, seconds), PT1S..P365D: e.g. P7D, PT12H, P1DT2H30M, P2W',
});
const PropertyPath = Type.String({
  maxLength: 256,
  description: 'the event property holding the number: dot chains and bracketed string keys, e.g. amount, $.order.total, order["total value"]',
});
const Description = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description: 'free text for people' });
/** Printable, no leading or trailing space, no control character. */
const UNIT_PATTERN = '^[^\\s\\x00-\\x1f\\x7f](?:[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f])?$';
export const UNIT_MAX_LENGTH = 16;
const Unit = Type.Union(
  [
    Type.String({
      minLength: 1,
      maxLength: UNIT_MAX_LENGTH,
      pattern: UNIT_PATTERN,
      description: 'printable, 1 to 16 characters, no leading or trailing space: e.g. ms, s, USD, €, items',
    }),
    Type.Null(),
  ],
  { description: 'the unit of the metric’s per-unit values, for display (e.g. ms, USD); null for none; not for binary metrics (a rate)' },
);
const HigherIsBetter = Type.Boolean({
  default: true,
  description: 'false for a metric where lower is better (load time, churn, errors): prob_best, the effect and the decision then favour lower values',
});

export const MetricCappingSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Enum(['absolute', 'percentile'], {
          description: 'absolute: each unit’s value is min(value, cap); percentile: the cap is that quantile of the nonzero per-unit values, per snapshot',
        }),
        value: Type.Number({ description: 'absolute: the cap (> 0); percentile: the quantile, strictly between 0.5 and 1' }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'winsorization of each unit’s value before the sums; not for binary or ratio metrics' },
);
export type MetricCapping = Exclude<Static<typeof MetricCappingSchema>, null>;

export const MetricSchema = Type.Object(
  {
    id: Id,
    workspace_id: Id,
    key: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    event_key: Type.Union([Type.String(), Type.Null()], { description: 'null for ratio metrics' }),
    kind: MetricKind,
    aggregation: MetricAggregation,
    higher_is_better: Type.Boolean(),
    capping: MetricCappingSchema,
    numerator_metric_id: Type.Union([Id, Type.Null()], { description: 'ratio metrics: the numerator; null otherwise' }),
    denominator_metric_id: Type.Union([Id, Type.Null()], { description: 'ratio metrics: the denominator; null otherwise' }),
    unit_dedup_window: Type.String({ description: 'ISO 8601 duration, as given' }),
    property_path: Type.Union([Type.String(), Type.Null()]),
    unit: Type.Union([Type.String(), Type.Null()], { description: 'the display unit of the values (e.g. ms, USD), or null' }),
    quantile: Type.Optional(Type.Number({ description: 'quantile metrics only: q, strictly between 0 and 1' })),
    quantile_level: Type.Optional(QuantileLevel),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'What an experiment measures: events with event_key, counted per unit within its dedup window' },
);
export type Metric = Static<typeof MetricSchema>;

export const MetricInput = Type.Object(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'unique in the workspace' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Description),
    event_key: Type.Optional(
      Type.String({ pattern: KEY_PATTERN, description: 'the event_key of the events this metric counts; required except for ratio metrics' }),
    ),
    kind: MetricKind,
    aggregation: Type.Optional(
      Type.Enum(['sum', 'mean', 'count'], { description: `${aggregationOptions.description}; defaults to count, and to sum for a ratio metric` }),
    ),
    higher_is_better: Type.Optional(HigherIsBetter),
    capping: Type.Optional(MetricCappingSchema),
    numerator_metric_id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: 'ratio metrics: a non-ratio metric of the workspace' })),
    denominator_metric_id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: 'ratio metrics: a non-ratio metric of the workspace' })),
    unit_dedup_window: Type.Optional(DedupWindow),
    property_path: Type.Optional(Type.Union([PropertyPath, Type.Null()], { description: 'required by sum and mean; null otherwise' })),
    unit: Type.Optional(Unit),
    quantile: Type.Optional(Quantile),
    quantile_level: Type.Optional(Type.Enum(['event', 'unit'], { description: `${quantileLevelDescription}; defaults to event` })),
  },
  { additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

export const MetricPatch = Type.Object(
  {
    key: Type.Optional(Type.String({ description: 'cannot change (experiments and dashboards refer to it); accepted when unchanged' })),
    kind: Type.Optional(Type.String({ description: 'cannot change: past snapshots were computed with it; accepted when unchanged' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Description),
    higher_is_better: Type.Optional(Type.Boolean()),
    capping: Type.Optional(MetricCappingSchema),
    property_path: Type.Optional(Type.Union([PropertyPath, Type.Null()])),
    unit_dedup_window: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 duration of fixed length, PT1S..P365D' })),
    unit: Type.Optional(Unit),
  },
  { additionalProperties: false },
);
export type MetricPatch = Static<typeof MetricPatch>;

export const MetricList = ListOf(MetricSchema, 'metrics of the workspace, oldest first');
export const MetricListQuery = Type.Object(PageQuery, { additionalProperties: false });
export const MetricParams = Type.Object({ id: Type.String() });

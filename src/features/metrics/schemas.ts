import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';
import { DEFAULT_DEDUP_WINDOW } from './dedup-window.js';

export const KEY_PATTERN = '^[a-z0-9._-]{1,128}$';

const MetricKind = Type.Enum(['binary', 'count', 'revenue', 'duration'], {
  description: 'binary: did the unit convert; count, revenue, duration: a per-unit number',
});
const aggregationOptions = {
  description: 'how a unit’s events in its window become one value: count them, or sum / average the number at property_path',
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

export const MetricSchema = Type.Object(
  {
    id: Id,
    workspace_id: Id,
    key: Type.String(),
    name: Type.String(),
    event_key: Type.String(),
    kind: MetricKind,
    aggregation: MetricAggregation,
    unit_dedup_window: Type.String({ description: 'ISO 8601 duration, as given' }),
    property_path: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { description: 'What an experiment measures: events with event_key, counted per unit within its dedup window' },
);

export const MetricInput = Type.Object(
  {
    key: Type.String({ pattern: KEY_PATTERN, description: 'unique in the workspace' }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    event_key: Type.String({ pattern: KEY_PATTERN, description: 'the event_key of the events this metric counts' }),
    kind: MetricKind,
    aggregation: Type.Optional(Type.Enum(['sum', 'mean', 'count'], { ...aggregationOptions, default: 'count' })),
    unit_dedup_window: Type.Optional(DedupWindow),
    property_path: Type.Optional(Type.Union([PropertyPath, Type.Null()], { description: 'required by sum and mean; null otherwise' })),
  },
  { additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

export const MetricList = ListOf(MetricSchema, 'metrics of the workspace, oldest first');
export const MetricListQuery = Type.Object(PageQuery, { additionalProperties: false });
export const MetricParams = Type.Object({ id: Type.String() });

import Type, { type Static } from 'typebox';
import { DEDUPE_WINDOW_DAYS } from '../../buffer/types.js';
import { unitIdSchema } from '../assignment/unit-id.js';

export const EVENT_KEY_PATTERN = '^[a-z0-9._-]{1,128}$';
export const MAX_BATCH_EVENTS = 500;

export const EventInput = Type.Object(
  {
    event_key: Type.String({ pattern: EVENT_KEY_PATTERN, description: 'what happened; metrics select events by this key' }),
    unit_id: unitIdSchema('the unit (user, account, ...) the event belongs to'),
    properties: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'free-form; at most 16 KB of JSON and nesting depth at most 8' })),
    occurred_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'when it happened (default: when received). 7 to 30 days old: accepted and counted as late; older: 412; ' + 'more than 5 minutes in the future: 422',
      }),
    ),
    client_event_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: `de-duplication key, unique per workspace for ${DEDUPE_WINDOW_DAYS} days` }),
    ),
  },
  { additionalProperties: false, description: 'a conversion or metric event' },
);
export type EventInput = Static<typeof EventInput>;

export const EventAck = Type.Object(
  {
    accepted: Type.Boolean(),
    idempotent_replay: Type.Boolean({ description: `true when client_event_id was already seen within ${DEDUPE_WINDOW_DAYS} days` }),
  },
  { description: 'the event is durably buffered; it reaches the analysis shortly after' },
);

/** The batch body as documented: an array of EventInput. */
export const EventBatchInput = Type.Object({ events: Type.Array(EventInput, { minItems: 1, maxItems: MAX_BATCH_EVENTS }) }, { additionalProperties: false });

/**
 * The batch body as validated: only the envelope. Each event is checked on its own, so one bad
 * event is listed in `rejected` instead of failing the other 499.
 */
export const EventBatchEnvelope = Type.Object(
  { events: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_EVENTS }) },
  { additionalProperties: false },
);

export const EventBatchAck = Type.Object(
  {
    accepted_count: Type.Integer({ description: 'events acknowledged, including idempotent replays' }),
    idempotent_replay_count: Type.Integer({ description: `of those, repeats of a client_event_id seen within ${DEDUPE_WINDOW_DAYS} days` }),
    rejected: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'position in `events`' }),
        reason: Type.String({ description: 'why, with JSON Pointers into the request body' }),
      }),
    ),
  },
  { description: 'accepted events are durably buffered; rejected ones are not stored' },
);
export type EventBatchAck = Static<typeof EventBatchAck>;

export const EventBufferStatus = Type.Object(
  {
    kind: Type.Union([Type.Literal('embedded'), Type.Literal('redis')]),
    pending: Type.Integer({ description: 'acknowledged events not yet in the events table' }),
    max_pending: Type.Integer({ description: 'above this, event ingest answers 429' }),
  },
  { description: 'the pending-event buffer between acknowledgement and storage' },
);

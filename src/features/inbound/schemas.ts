import Type from 'typebox';
import { EventBatchInput, EventInput } from '../events/schemas.js';
import { DEDUPE_WINDOW_DAYS } from '../../buffer/types.js';

export const InboundParams = Type.Object({
  workspace_id: Type.String({ description: 'the workspace id (ULID)' }),
  source_slug: Type.String({ description: 'the slug of a webhook source of that workspace' }),
});

export const InboundHeaders = Type.Object({
  'x-service-signature': Type.Optional(
    Type.String({ description: 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the inbound_secret>[,v1=...]' }),
  ),
  'idempotency-key': Type.Optional(
    Type.String({ description: 'at most 64 characters; a repeat within 24 hours gets the original response and ingests nothing' }),
  ),
});

export const InboundBody = Type.Union([EventInput, EventBatchInput], {
  description: 'one event, or {"events": [...]} with 1 to 500 events; verified byte for byte against the signature',
});

export const InboundAck = Type.Object(
  {
    delivery_id: Type.String({ description: 'the delivery as listed at GET /v1/webhook-sources/{id}/deliveries' }),
    accepted_count: Type.Integer({ description: 'events durably accepted, including repeats of a client_event_id' }),
    idempotent_replay_count: Type.Integer({ description: `of those, repeats of a client_event_id seen within ${DEDUPE_WINDOW_DAYS} days` }),
    rejected: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'position in `events` (0 for a single event)' }),
        reason: Type.String(),
      }),
    ),
  },
  { description: 'the ingest is enqueued: accepted events are in the durable event buffer' },
);

export interface InboundAck {
  delivery_id: string;
  accepted_count: number;
  idempotent_replay_count: number;
  rejected: Array<{ index: number; reason: string }>;
}

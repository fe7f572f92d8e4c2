import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const SOURCE_SLUG_PATTERN = '^[a-z0-9-]{1,64}$';

const Slug = Type.String({
  pattern: SOURCE_SLUG_PATTERN,
  description: 'lowercase letters, digits and dashes; unique in the workspace; the last segment of the inbound URL',
});
const Name = Type.String({ minLength: 1, maxLength: 200 });

const sourceProperties = {
  id: Id,
  workspace_id: Id,
  slug: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean({ description: 'a disabled source answers 409 to inbound posts' }),
  inbound_path: Type.String({ description: 'where the sender posts: /webhooks/inbound/{workspace_id}/{slug}' }),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'after a rotation, until when the previous inbound_secret still verifies; null when it no longer does',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookSourceSchema = Type.Object(sourceProperties, {
  description: 'A sender of signed inbound webhooks. The secret is shown only at creation and rotation.',
});

export const WebhookSourceWithSecret = Type.Object(
  {
    ...sourceProperties,
    inbound_secret: Type.String({ description: 'whsec_...; signs X-Service-Signature. Returned only now: store it.' }),
  },
  { description: 'A source with its new inbound_secret, returned once' },
);

export const WebhookSourceInput = Type.Object(
  { slug: Slug, name: Name, enabled: Type.Optional(Type.Boolean({ default: true })) },
  { additionalProperties: false },
);
export type WebhookSourceInput = Static<typeof WebhookSourceInput>;

export const WebhookSourcePatch = Type.Object(
  { slug: Type.Optional(Slug), name: Type.Optional(Name), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);
export type WebhookSourcePatch = Static<typeof WebhookSourcePatch>;

export const WebhookSourceParams = Type.Object({ id: Type.String() });
export const WebhookSourceList = ListOf(WebhookSourceSchema, 'webhook sources of the workspace, oldest first');
export const WebhookSourceListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const DELIVERY_OUTCOMES = ['accepted', 'replayed', 'unauthorized', 'disabled', 'invalid', 'idempotency_conflict', 'failed'] as const;

export const WebhookDeliverySchema = Type.Object(
  {
    id: Id,
    source_id: Id,
    received_at: Timestamp,
    outcome: Type.Union(
      DELIVERY_OUTCOMES.map((outcome) => Type.Literal(outcome)),
      {
        description:
          'accepted: ingested (202); replayed: a repeated Idempotency-Key answered with the stored response, nothing ingested; ' +
          'unauthorized: signature refused (401); disabled: source disabled (409); invalid: body or Idempotency-Key refused (400/412/422); ' +
          'idempotency_conflict: key in flight (409) or reused with another body (422); failed: the buffer was full or unreachable (429/503) or an error (500)',
      },
    ),
    status_code: Type.Integer({ description: 'the HTTP status answered' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'why it was refused, or null' }),
    idempotency_key: Type.Union([Type.String(), Type.Null()]),
    event_count: Type.Integer({ description: 'events in the body; 0 when the body was not read or not understood' }),
    accepted_count: Type.Integer(),
    rejected_count: Type.Integer(),
  },
  { description: 'One post to the source’s inbound URL' },
);

export const WebhookDeliveryList = ListOf(WebhookDeliverySchema, 'deliveries of the source, newest first');
export const WebhookDeliveryListQuery = Type.Object(
  { ...PageQuery, outcome: Type.Optional(Type.Union(DELIVERY_OUTCOMES.map((outcome) => Type.Literal(outcome)))) },
  { additionalProperties: false },
);

import Type, { type Static } from 'typebox';
import { Id, ListOf, NullableTimestamp, PageQuery, Timestamp } from '../../http/schemas.js';

/** Every event type an endpoint can subscribe to (docs/webhooks.md "Event types"); `ping` is sent only by POST .../test. */
export const EVENT_TYPES = [
  'experiment.started',
  'experiment.stopped',
  'experiment.recommendation_changed',
  'experiment.guardrail_regressed',
  'experiment.srm_detected',
  'experiment.srm_cleared',
  'experiment.no_data',
  'experiment.analysis_failed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number] | 'ping';

const EventTypeSchema = Type.Enum([...EVENT_TYPES, '*']);
const EventTypes = Type.Array(EventTypeSchema, {
  minItems: 1,
  maxItems: EVENT_TYPES.length + 1,
  uniqueItems: true,
  description: 'the event types delivered, or ["*"] for all of them',
});
const Url = Type.String({
  minLength: 8,
  maxLength: 2048,
  pattern: '^https?://[^\\s]+$',
  description:
    'where deliveries are POSTed: an http or https URL a WHATWG URL parser accepts, with a host and a port from 1 to 65535 (else 422); stored encrypted',
});
const Description = Type.String({ maxLength: 500 });

/** At most this many experiments in an endpoint's filter: past that, "every experiment" is what is meant. */
export const MAX_FILTERED_EXPERIMENTS = 100;
const ExperimentIds = Type.Union([Type.Array(Id, { minItems: 1, maxItems: MAX_FILTERED_EXPERIMENTS, uniqueItems: true }), Type.Null()], {
  description:
    'the experiments whose events the endpoint is sent (ids of this workspace), or null for every experiment; a test ping is sent whatever the filter',
});
const ExperimentRef = Type.Object(
  { id: Id, key: Type.String(), name: Type.String() },
  { description: 'an experiment by id, key and name, so a reader need not look it up' },
);
const Format = Type.Union([Type.Literal('verdict'), Type.Literal('slack')], {
  description: 'verdict: the signed event envelope; slack: a Slack incoming-webhook message (text and blocks), unsigned: the URL is the secret',
});

const endpointProperties = {
  id: Id,
  workspace_id: Id,
  url: Type.String({
    description:
      'masked: scheme, host and port, then "/…" and the last four characters of the path when at least sixteen more stay hidden (the URL is a secret; only the answer to create shows it whole)',
  }),
  description: Type.String(),
  event_types: Type.Array(Type.String()),
  enabled: Type.Boolean({ description: 'a disabled endpoint is sent nothing new' }),
  format: Format,
  previous_secret_expires_at: NullableTimestamp,
  failing_since: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    format: 'date-time',
    description: 'when the current run of failed attempts began; after three days of failures the endpoint is disabled',
  }),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'why Verdict disabled the endpoint, or null' }),
  experiment_ids: ExperimentIds,
  experiments: Type.Array(ExperimentRef, { description: 'the experiments of `experiment_ids` by name (empty when every experiment is sent)' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WebhookEndpointSchema = Type.Object(endpointProperties, {
  description: 'A URL that receives event deliveries. The signing secret is shown only at creation and rotation.',
});
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;

const Warnings = Type.Array(Type.String(), {
  description: 'problems found with the URL now, e.g. a host with no public address (deliveries to it will be refused); never what the host resolves to',
});

export const WebhookEndpointWritten = Type.Object({ ...endpointProperties, warnings: Warnings }, { description: 'The endpoint as saved, with warnings' });

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...endpointProperties,
    warnings: Warnings,
    secret: Type.String({ description: 'whsec_...; signs Verdict-Signature. Returned only now: store it.' }),
  },
  { description: 'An endpoint with its new signing secret, returned once; at creation `url` is the whole URL, at a rotation it is masked' },
);

export const WebhookEndpointInput = Type.Object(
  {
    url: Url,
    description: Type.Optional(Description),
    event_types: EventTypes,
    enabled: Type.Optional(Type.Boolean({ default: true })),
    format: Type.Optional(Format),
    experiment_ids: Type.Optional(ExperimentIds),
  },
  { additionalProperties: false },
);
export type WebhookEndpointInput = Static<typeof WebhookEndpointInput>;

export const WebhookEndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Description),
    event_types: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'true re-enables an endpoint Verdict disabled, and clears its failure run' })),
    format: Type.Optional(Format),
    experiment_ids: Type.Optional(ExperimentIds),
  },
  { additionalProperties: false },
);
export type WebhookEndpointPatch = Static<typeof WebhookEndpointPatch>;

export const WebhookEndpointParams = Type.Object({ id: Type.String() });
export const EndpointDeliveryParams = Type.Object({ id: Type.String(), deliveryId: Type.String() });
export const WebhookEndpointList = ListOf(WebhookEndpointSchema, 'webhook endpoints of the workspace, oldest first');
export const WebhookEndpointListQuery = Type.Object(PageQuery, { additionalProperties: false });

export const OUTBOUND_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const EndpointDeliverySchema = Type.Object(
  {
    id: Id,
    endpoint_id: Id,
    event_id: Id,
    event_type: Type.String(),
    experiment: Type.Union([ExperimentRef, Type.Null()], {
      description: 'the experiment the event is about; null for a test ping, a deleted experiment, and deliveries stored before this field',
    }),
    status: Type.Enum([...OUTBOUND_STATUSES], {
      description: 'pending: an attempt is due (see next_attempt_at); succeeded: a 2xx answered; failed: retries ran out or the endpoint was disabled',
    }),
    attempts: Type.Integer({ description: 'attempts made so far' }),
    response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'the last attempt’s HTTP status; null when it got no answer' }),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'the first 1 KB of the last response body (a NUL byte kept as U+FFFD)' }),
    duration_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'how long the last attempt took' }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'why the last attempt failed (a refused address, a timeout, a status), or null' }),
    next_attempt_at: NullableTimestamp,
    created_at: Timestamp,
    delivered_at: NullableTimestamp,
  },
  { description: 'One event for one endpoint and the state of its attempts' },
);
export type EndpointDelivery = Static<typeof EndpointDeliverySchema>;

export const EndpointDeliveryList = ListOf(EndpointDeliverySchema, 'deliveries of the endpoint, newest first');
export const EndpointDeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Type.Enum([...OUTBOUND_STATUSES])) },
  { additionalProperties: false },
);

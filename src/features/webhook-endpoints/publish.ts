import type { Executor } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { enqueueAttempt } from './delivery-job.js';
import type { WebhookEndpointsDeps } from './deps.js';
import type { EventType } from './schemas.js';
import { slackMessage } from './slack.js';
import { experimentFilterOf, insertDelivery, listEnabledEndpoints, type WebhookEndpointRow } from './store.js';

/** Retries stop this long after the event (or a redelivery): about three days, as Stripe does. */
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;

/** What a person reads in a chat message; the sender of the event writes it. */
export interface EventSummary {
  headline: string;
  fields: Array<{ label: string; value: string }>;
  link: string | null;
}

export interface OutboundEvent {
  workspaceId: string;
  /** The experiment the event is about: an endpoint limited to some experiments is sent only theirs. */
  experimentId: string;
  type: EventType;
  data: Record<string, unknown>;
  summary: EventSummary;
}

/** Whether the endpoint is sent an event of this type about this experiment (a ping always is). */
export function subscribes(endpoint: WebhookEndpointRow, type: EventType, experimentId: string | null): boolean {
  if (type === 'ping') return true;
  const types = JSON.parse(endpoint.event_types) as string[];
  if (!types.includes('*') && !types.includes(type)) return false;
  const experiments = experimentFilterOf(endpoint);
  return experiments === null || (experimentId !== null && experiments.includes(experimentId));
}

/** The body every attempt sends: the event envelope, or Slack's message for a slack endpoint. */
export function deliveryBody(endpoint: WebhookEndpointRow, envelope: Record<string, unknown>, summary: EventSummary): string {
  return JSON.stringify(endpoint.format === 'slack' ? slackMessage(summary) : envelope);
}

/** Inserts the delivery of one event to one endpoint and enqueues its first attempt; returns the delivery id. */
export async function createDelivery(
  ctx: WebhookEndpointsDeps,
  executor: Executor,
  endpoint: WebhookEndpointRow,
  event: { id: string; type: EventType; experimentId: string | null; body: string },
  now: number,
): Promise<string> {
  const id = newId();
  await insertDelivery(executor, {
    id,
    workspace_id: endpoint.workspace_id,
    endpoint_id: endpoint.id,
    event_id: event.id,
    event_type: event.type,
    experiment_id: event.experimentId,
    body: event.body,
    status: 'pending',
    attempts: 0,
    response_status: null,
    response_body: null,
    duration_ms: null,
    last_error: null,
    next_attempt_at: now,
    retry_until: now + RETRY_WINDOW_MS,
    created_at: now,
    updated_at: now,
    delivered_at: null,
  });
  await enqueueAttempt(ctx, executor, { deliveryId: id, workspaceId: endpoint.workspace_id, attempt: 1, runAt: now });
  return id;
}

export function envelopeOf(eventId: string, event: Pick<OutboundEvent, 'workspaceId' | 'type' | 'data'>, now: number): Record<string, unknown> {
  return { id: eventId, type: event.type, created_at: toIso(now), workspace_id: event.workspaceId, data: event.data };
}

/**
 * One event to every enabled endpoint of the workspace that subscribes to its type, in the
 * caller's transaction: the event is sent if and only if the change that caused it commits.
 */
export async function publishEvent(ctx: WebhookEndpointsDeps, executor: Executor, event: OutboundEvent): Promise<string> {
  const now = ctx.clock.now();
  const eventId = newId();
  const envelope = envelopeOf(eventId, event, now);
  const endpoints = await listEnabledEndpoints(executor, event.workspaceId);
  for (const endpoint of endpoints.filter((candidate) => subscribes(candidate, event.type, event.experimentId))) {
    const delivery = { id: eventId, type: event.type, experimentId: event.experimentId, body: deliveryBody(endpoint, envelope, event.summary) };
    await createDelivery(ctx, executor, endpoint, delivery, now);
  }
  return eventId;
}

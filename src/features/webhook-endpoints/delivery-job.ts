// The delivery job: one job per attempt of one delivery (an event for an endpoint). The job key
// names the delivery and the attempt, so an attempt is enqueued once; the attempt is recorded
// only if the delivery is still where the attempt found it, so a job run twice (its worker was
// killed after sending, its lease lapsed) sends the same event again, with the same id, and
// records once. A receiver deduplicates by the event id.
import type { Executor } from '../../db/database.js';
import { recordAudit } from '../audit/recorder.js';
import { workingSecrets } from '../../lib/rotating-secret.js';
import { signatureHeader } from '../../lib/webhook-signing.js';
import type { WebhookEndpointsDeps } from './deps.js';
import { sendDelivery, type SendResult } from './sender.js';
import { failPendingDeliveries, findDeliveryById, lockEndpointById, recordAttempt, type EndpointDeliveryRow, type WebhookEndpointRow } from './store.js';
import { RETRY_WINDOW_MS } from './publish.js';

export const DELIVERY_JOB = 'webhooks.deliver';
/** Retries of the job itself (a database error while recording); the delivery's own retries are attempts. */
const JOB_MAX_ATTEMPTS = 5;
/** One wait never exceeds a day, so about a dozen attempts fit in the three days. */
const MAX_DELAY_MS = 24 * 60 * 60 * 1000;
/** An endpoint whose attempts have failed for this long, with no success between, is disabled. */
export const DISABLE_AFTER_MS = RETRY_WINDOW_MS;

export interface AttemptPayload {
  delivery_id: string;
  attempt: number;
}

export async function enqueueAttempt(
  ctx: WebhookEndpointsDeps,
  executor: Executor,
  next: { deliveryId: string; workspaceId: string; attempt: number; runAt: number; tag?: string },
) {
  const payload: AttemptPayload = { delivery_id: next.deliveryId, attempt: next.attempt };
  // The outbound lane: deliveries run in a pool of their own, shared fairly between workspaces.
  await ctx.enqueue(executor, {
    name: DELIVERY_JOB,
    payload,
    lane: 'outbound',
    workspaceId: next.workspaceId,
    runAt: next.runAt,
    maxAttempts: JOB_MAX_ATTEMPTS,
    jobKey: `${DELIVERY_JOB}:${next.deliveryId}:${next.attempt}${next.tag ? `:${next.tag}` : ''}`,
  });
}

/**
 * The wait before attempt `attempt + 1`: base·2^(attempt-1), capped at a day, with "equal jitter"
 * (half fixed, half random) so that the retries of a burst do not arrive together.
 */
export function retryDelayMs(baseMs: number, attempt: number, random: () => number = Math.random): number {
  const exponential = Math.min(baseMs * 2 ** Math.max(attempt - 1, 0), MAX_DELAY_MS);
  return Math.round(exponential / 2 + (exponential / 2) * random());
}

function headersFor(ctx: WebhookEndpointsDeps, endpoint: WebhookEndpointRow, delivery: EndpointDeliveryRow, attempt: number, now: number) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Verdict-Webhooks/1',
    'verdict-event-id': delivery.event_id,
    'verdict-event-type': delivery.event_type,
    'verdict-delivery-attempt': String(attempt),
  };
  // A Slack URL is the secret itself; Slack ignores signatures, so none is sent.
  if (endpoint.format === 'verdict') {
    headers['verdict-signature'] = signatureHeader(workingSecrets(ctx.secrets, endpoint, now), Math.floor(now / 1000), Buffer.from(delivery.body, 'utf8'));
  }
  return headers;
}

/** Runs one attempt of a delivery, if it is still due; records what happened. */
export async function runAttempt(ctx: WebhookEndpointsDeps, payload: AttemptPayload): Promise<void> {
  const delivery = await findDeliveryById(ctx.db, payload.delivery_id);
  // Stale: the delivery is gone (its endpoint was deleted), finished, or this attempt was recorded.
  if (!delivery || delivery.status !== 'pending' || delivery.attempts !== payload.attempt - 1) return;
  const endpoint = await ctx.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', delivery.endpoint_id).executeTakeFirst();
  if (!endpoint) return;
  const now = ctx.clock.now();
  const result: SendResult =
    endpoint.enabled === 1
      ? await sendDelivery({
          url: ctx.secrets.open(endpoint.url_enc),
          body: delivery.body,
          headers: headersFor(ctx, endpoint, delivery, payload.attempt, now),
          timeoutMs: ctx.config.outbound.timeoutMs,
          dnsTimeoutMs: ctx.config.outbound.dnsTimeoutMs,
          allowPrivateNetworks: ctx.config.outbound.allowPrivateNetworks,
        })
      : { ok: false, status: null, body: null, durationMs: 0, error: 'the endpoint is disabled' };
  await ctx.db.transaction().execute((trx) => recordOutcome(ctx, trx, delivery, payload.attempt, result));
}

async function recordOutcome(ctx: WebhookEndpointsDeps, trx: Executor, delivery: EndpointDeliveryRow, attempt: number, result: SendResult): Promise<void> {
  const now = ctx.clock.now();
  const endpoint = await lockEndpointById(trx, ctx.seam, delivery.endpoint_id);
  if (!endpoint) return;
  const nextAt = now + retryDelayMs(ctx.config.outbound.retryBaseMs, attempt);
  const retry = !result.ok && endpoint.enabled === 1 && nextAt <= delivery.retry_until;
  const recorded = await recordAttempt(trx, delivery.id, attempt - 1, {
    attempts: attempt,
    status: result.ok ? 'succeeded' : retry ? 'pending' : 'failed',
    response_status: result.status,
    response_body: result.body,
    duration_ms: result.durationMs,
    last_error: result.ok ? null : result.error,
    next_attempt_at: retry ? nextAt : null,
    delivered_at: result.ok ? now : null,
    updated_at: now,
  });
  if (!recorded) return;
  if (retry) await enqueueAttempt(ctx, trx, { deliveryId: delivery.id, workspaceId: delivery.workspace_id, attempt: attempt + 1, runAt: nextAt });
  await trackEndpointHealth(ctx, trx, endpoint, result.ok, now);
}

/** A success ends the endpoint's failure run; three days of failures disable it (audit-logged). */
async function trackEndpointHealth(ctx: WebhookEndpointsDeps, trx: Executor, endpoint: WebhookEndpointRow, ok: boolean, now: number): Promise<void> {
  if (ok) {
    if (endpoint.failing_since !== null) await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpoint.id).execute();
    return;
  }
  if (endpoint.enabled !== 1) return;
  const since = endpoint.failing_since ?? now;
  if (now - since < DISABLE_AFTER_MS) {
    if (endpoint.failing_since === null) await trx.updateTable('webhook_endpoints').set({ failing_since: now }).where('id', '=', endpoint.id).execute();
    return;
  }
  const reason = 'every delivery attempt failed for three days';
  await trx.updateTable('webhook_endpoints').set({ enabled: 0, disabled_reason: reason, updated_at: now }).where('id', '=', endpoint.id).execute();
  await failPendingDeliveries(trx, endpoint.id, `not retried: ${reason} and the endpoint was disabled`, now);
  await recordAudit(trx, {
    workspaceId: endpoint.workspace_id,
    actorId: null,
    action: 'webhook_endpoint.disabled',
    targetType: 'webhook_endpoint',
    targetId: endpoint.id,
    payload: { reason, failing_since: new Date(since).toISOString() },
    at: now,
  });
}

function payloadOf(payload: unknown): AttemptPayload {
  const given = (typeof payload === 'object' && payload !== null ? payload : {}) as Partial<AttemptPayload>;
  if (typeof given.delivery_id !== 'string' || typeof given.attempt !== 'number') throw new Error(`${DELIVERY_JOB} needs a payload {delivery_id, attempt}`);
  return { delivery_id: given.delivery_id, attempt: given.attempt };
}

export function registerDeliveryJobs(ctx: WebhookEndpointsDeps): void {
  ctx.jobs.register(DELIVERY_JOB, async (payload) => runAttempt(ctx, payloadOf(payload)));
}

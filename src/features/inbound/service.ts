import type { WebhookDeliveryOutcome } from '../../db/tables/webhooks.js';
import { Problem, problems } from '../../http/problems.js';
import { newId, ULID_PATTERN } from '../../lib/ids.js';
import type { IngestOutcome } from '../events/service.js';
import { recordDelivery } from '../webhook-sources/deliveries.js';
import { findWebhookSourceBySlug, verifyingSecrets, type WebhookSourceRow } from '../webhook-sources/read.js';
import { parseInboundBody } from './body.js';
import { claimIdempotencyKey, completeIdempotencyKey, fingerprintOf, idempotencyKeyOf, releaseIdempotencyKey, type IdempotencyScope } from './idempotency.js';
import type { InboundDeps } from './deps.js';
import type { InboundAck } from './schemas.js';
import { verifyInboundSignature, type HeaderValue, type SignatureFailure } from './signature.js';

export interface InboundRequest {
  workspaceId: string;
  sourceSlug: string;
  signature: HeaderValue;
  idempotencyKey: string | string[] | undefined;
  rawBody: Buffer;
}

export interface InboundResponse {
  status: 202;
  body: InboundAck;
  /** True when the body is the stored response of an earlier request with the same key. */
  replayed: boolean;
}

/** What is known about a delivery so far; a failure is recorded with it. */
interface DeliveryDraft {
  source: WebhookSourceRow;
  receivedAt: number;
  idempotencyKey: string | null;
  eventCount: number;
}

const SIGNATURE_PROBLEMS: Record<SignatureFailure, string> = {
  missing: 'the X-Service-Signature header is missing; send t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">',
  malformed: 'the X-Service-Signature header is malformed; expected t=<unix seconds>,v1=<64 hex digits>[,v1=...]',
  expired: 'the X-Service-Signature timestamp is more than 5 minutes old; sign again with the current time',
  future: 'the X-Service-Signature timestamp is more than 5 minutes in the future; check the sender’s clock',
  mismatch: 'no v1 signature matches "<t>.<raw body>" for this source’s inbound secret (or its previous one within 24 hours of a rotation)',
};

/** 404 alike for a malformed workspace id, an unknown workspace and an unknown slug. */
async function resolveSource(ctx: InboundDeps, workspaceId: string, slug: string): Promise<WebhookSourceRow> {
  const source = ULID_PATTERN.test(workspaceId) ? await findWebhookSourceBySlug(ctx.db, workspaceId, slug) : undefined;
  if (!source) throw problems.notFound(`no webhook source "${slug}" in workspace ${workspaceId}`);
  return source;
}

function checkSignature(ctx: InboundDeps, draft: DeliveryDraft, request: InboundRequest): void {
  const verdict = verifyInboundSignature({
    header: request.signature,
    rawBody: request.rawBody,
    secrets: verifyingSecrets(ctx, draft.source, draft.receivedAt),
    nowSeconds: Math.floor(draft.receivedAt / 1000),
  });
  if (!verdict.ok) throw problems.invalidSignature(SIGNATURE_PROBLEMS[verdict.reason]);
}

function ackOf(deliveryId: string, outcomes: IngestOutcome[]): InboundAck {
  const ack: InboundAck = { delivery_id: deliveryId, accepted_count: 0, idempotent_replay_count: 0, rejected: [] };
  outcomes.forEach((outcome, index) => {
    if (outcome.status === 'rejected') ack.rejected.push({ index, reason: outcome.reason });
    else ack.accepted_count += 1;
    if (outcome.status === 'replay') ack.idempotent_replay_count += 1;
  });
  return ack;
}

function acceptedDelivery(draft: DeliveryDraft, id: string, outcome: WebhookDeliveryOutcome, ack: InboundAck) {
  return {
    id,
    workspace_id: draft.source.workspace_id,
    source_id: draft.source.id,
    received_at: draft.receivedAt,
    outcome,
    status_code: 202,
    reason: null,
    idempotency_key: draft.idempotencyKey,
    event_count: draft.eventCount,
    accepted_count: outcome === 'accepted' ? ack.accepted_count : 0,
    rejected_count: outcome === 'accepted' ? ack.rejected.length : 0,
  };
}

/**
 * Handles one post to /webhooks/inbound/{workspace_id}/{source_slug}: resolve the source (404),
 * verify the signature over the raw bytes (401), refuse a disabled source (409), read the body
 * (400/412/422), then ingest into the same durable event pipeline as /v1/events and answer 202.
 * Every delivery to a known source is recorded, refused ones included.
 */
export async function receiveInbound(ctx: InboundDeps, request: InboundRequest): Promise<InboundResponse> {
  const source = await resolveSource(ctx, request.workspaceId, request.sourceSlug);
  const draft: DeliveryDraft = { source, receivedAt: ctx.clock.now(), idempotencyKey: null, eventCount: 0 };
  try {
    return await handleDelivery(ctx, draft, request);
  } catch (error) {
    await recordRefusal(ctx, draft, error);
    throw error;
  }
}

async function handleDelivery(ctx: InboundDeps, draft: DeliveryDraft, request: InboundRequest): Promise<InboundResponse> {
  // The signature comes before anything else, so only the sender learns that a source is
  // disabled or that a key is in use.
  checkSignature(ctx, draft, request);
  if (draft.source.enabled !== 1) {
    throw problems.sourceDisabled(`webhook source "${draft.source.slug}" is disabled; enable it to accept deliveries`);
  }
  draft.idempotencyKey = idempotencyKeyOf(request.idempotencyKey);
  const body = parseInboundBody(request.rawBody, draft.source.workspace_id, draft.receivedAt);
  draft.eventCount = body.events.length;
  if (draft.idempotencyKey === null) return ingestOnce(ctx, draft, body.events);
  const scope = { workspaceId: draft.source.workspace_id, sourceId: draft.source.id, key: draft.idempotencyKey };
  return ingestWithKey(ctx, draft, scope, body.events, fingerprintOf(request.rawBody));
}

/** No Idempotency-Key: every post is ingested (events still de-duplicate on client_event_id). */
async function ingestOnce(ctx: InboundDeps, draft: DeliveryDraft, events: unknown[]): Promise<InboundResponse> {
  const outcomes = await ctx.ingestEvents(draft.source.workspace_id, events);
  const ack = ackOf(newId(), outcomes);
  await recordDelivery(ctx.db, acceptedDelivery(draft, ack.delivery_id, 'accepted', ack));
  return { status: 202, body: ack, replayed: false };
}

async function ingestWithKey(
  ctx: InboundDeps,
  draft: DeliveryDraft,
  scope: IdempotencyScope,
  events: unknown[],
  fingerprint: string,
): Promise<InboundResponse> {
  const claim = await claimIdempotencyKey(ctx.db, scope, fingerprint, draft.receivedAt);
  if (claim.kind === 'replay') {
    const stored = claim.body as InboundAck;
    await recordDelivery(ctx.db, acceptedDelivery(draft, newId(), 'replayed', stored));
    return { status: 202, body: stored, replayed: true };
  }
  let outcomes: IngestOutcome[];
  try {
    outcomes = await ctx.ingestEvents(draft.source.workspace_id, events);
  } catch (error) {
    // Nothing was buffered (an append is all or nothing): let the sender retry with the key.
    await releaseIdempotencyKey(ctx.db, scope, claim.token);
    throw error;
  }
  const ack = ackOf(newId(), outcomes);
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await completeIdempotencyKey(trx, scope, claim.token, { status: 202, body: ack }))) {
      ctx.logger.warn({ source_id: scope.sourceId }, 'an idempotency claim was taken over before its request completed');
    }
    await recordDelivery(trx, acceptedDelivery(draft, ack.delivery_id, 'accepted', ack));
  });
  return { status: 202, body: ack, replayed: false };
}

function refusalOutcome(problem: Problem): WebhookDeliveryOutcome {
  if (problem.type.endsWith('/idempotency-key-in-flight') || problem.type.endsWith('/idempotency-key-reused')) return 'idempotency_conflict';
  if (problem.status === 401) return 'unauthorized';
  if (problem.status === 409) return 'disabled';
  if (problem.status >= 400 && problem.status < 429) return 'invalid';
  return 'failed';
}

/** Records a refused delivery; a failure to record is logged, never hides the refusal itself. */
async function recordRefusal(ctx: InboundDeps, draft: DeliveryDraft, error: unknown): Promise<void> {
  const problem = error instanceof Problem ? error : null;
  try {
    await recordDelivery(ctx.db, {
      id: newId(),
      workspace_id: draft.source.workspace_id,
      source_id: draft.source.id,
      received_at: draft.receivedAt,
      outcome: problem ? refusalOutcome(problem) : 'failed',
      status_code: problem?.status ?? 500,
      reason: problem?.detail ?? 'unexpected error',
      idempotency_key: draft.idempotencyKey,
      event_count: draft.eventCount,
      accepted_count: 0,
      rejected_count: 0,
    });
  } catch (recordError) {
    ctx.logger.error({ err: recordError, source_id: draft.source.id }, 'recording a refused webhook delivery failed');
  }
}

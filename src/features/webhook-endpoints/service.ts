import dns from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Executor } from '../../db/database.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { rotatedColumns } from '../../lib/rotating-secret.js';
import { toIso } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { newWebhookSecret } from '../workspaces/webhook-secret.js';
import { enqueueAttempt } from './delivery-job.js';
import type { WebhookEndpointsDeps } from './deps.js';
import { maskEndpointUrl, parseUrl, requireEndpointUrl } from './endpoint-url.js';
import { isRefusedAddress, PRIVATE_ADDRESS } from './network-policy.js';
import { createDelivery, deliveryBody, envelopeOf, RETRY_WINDOW_MS } from './publish.js';
import { NO_PUBLIC_ADDRESS } from './sender.js';
import type { WebhookEndpointInput, WebhookEndpointPatch } from './schemas.js';
import {
  countEndpoints,
  deleteEndpoint,
  experimentFilterOf,
  experimentRefs,
  type ExperimentRefs,
  failPendingDeliveries,
  findEndpoint,
  insertEndpoint,
  lockDelivery,
  lockEndpoint,
  toEndpointDelivery,
  toWebhookEndpoint,
  updateDelivery,
  updateEndpoint,
  type WebhookEndpointRow,
} from './store.js';

interface Actor {
  workspaceId: string;
  actorId: string;
}

function notFound(id: string) {
  return problems.notFound(`no webhook endpoint with id ${id}`);
}

async function audit(trx: Executor, actor: Actor, action: string, endpointId: string, payload: Record<string, unknown>, at: number) {
  await recordAudit(trx, { ...actor, action, targetType: 'webhook_endpoint', targetId: endpointId, payload, at });
}

const UNLESS_ALLOWED = 'deliveries to it are refused unless VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1';

/** Resolves within the timeout, or rejects. */
async function lookupWithin(host: string, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), timeoutMs);
  });
  return Promise.race([dns.lookup(host, { all: true }), timeout]).finally(() => clearTimeout(timer));
}

/**
 * What is wrong with the URL now, as warnings (the endpoint is saved anyway: DNS may change, and
 * the override may be set later). Deliveries check again at connect time; this is only a hint,
 * and like a delivery's last_error it never says what a name resolves to, nor whether it exists.
 */
export async function urlWarnings(ctx: WebhookEndpointsDeps, url: URL): Promise<string[]> {
  if (ctx.config.outbound.allowPrivateNetworks) return [];
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isRefusedAddress(host) ? [`refused: ${PRIVATE_ADDRESS}; ${UNLESS_ALLOWED}`] : [];
  const addresses = await lookupWithin(host, ctx.config.outbound.dnsTimeoutMs).catch(() => []);
  const usable = addresses.length > 0 && !addresses.some((entry) => isRefusedAddress(entry.address));
  return usable ? [] : [`${NO_PUBLIC_ADDRESS}; ${UNLESS_ALLOWED}`];
}

/** The URL, parsed, or a 422 problem pointing at /url; never quoting it (it may hold credentials). */
function checkedUrl(text: string): URL {
  requireEndpointUrl(text);
  return parseUrl(text) as URL;
}

/**
 * The experiments of a filter, by id, or a 422 naming each id that is no experiment of the
 * workspace (checked in the transaction that saves the filter).
 */
async function checkedFilter(trx: Executor, workspaceId: string, ids: readonly string[] | null | undefined): Promise<ExperimentRefs> {
  if (!ids) return new Map();
  const refs = await experimentRefs(trx, workspaceId, ids);
  const unknown = ids.flatMap((id, index) =>
    refs.has(id) ? [] : [{ pointer: `/experiment_ids/${index}`, message: 'is not an experiment of this workspace' }],
  );
  if (unknown.length > 0) throw problems.validation(unknown);
  return refs;
}

/** Refuses a new endpoint past the workspace's cap, with the workspace row locked so two creations cannot both pass. */
async function requireRoomForEndpoint(ctx: WebhookEndpointsDeps, trx: Executor, workspaceId: string): Promise<void> {
  await ctx.seam.forUpdate(trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId)).execute();
  const limit = ctx.config.outbound.maxEndpointsPerWorkspace;
  if ((await countEndpoints(trx, workspaceId)) >= limit) {
    throw problems.endpointLimitReached(
      `the workspace has ${limit} webhook endpoints, the most it may have (VERDICT_WEBHOOK_MAX_ENDPOINTS): delete one before creating another`,
    );
  }
}

export async function createEndpoint(ctx: WebhookEndpointsDeps, actor: Actor, input: WebhookEndpointInput) {
  const warnings = await urlWarnings(ctx, checkedUrl(input.url));
  const secret = newWebhookSecret();
  return ctx.db.transaction().execute(async (trx) => {
    await requireRoomForEndpoint(ctx, trx, actor.workspaceId);
    const refs = await checkedFilter(trx, actor.workspaceId, input.experiment_ids);
    const now = ctx.clock.now();
    const row: WebhookEndpointRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      url_enc: ctx.secrets.seal(input.url),
      url_masked: maskEndpointUrl(input.url),
      description: input.description ?? '',
      event_types: JSON.stringify(input.event_types.includes('*') ? ['*'] : input.event_types),
      enabled: input.enabled === false ? 0 : 1,
      format: input.format ?? 'verdict',
      secret_enc: ctx.secrets.seal(secret),
      previous_secret_enc: null,
      previous_secret_expires_at: null,
      failing_since: null,
      disabled_reason: null,
      experiment_ids: input.experiment_ids ? JSON.stringify(input.experiment_ids) : null,
      created_at: now,
      updated_at: now,
    };
    await insertEndpoint(trx, row);
    const endpoint = toWebhookEndpoint(row, now, refs);
    const { url, description, event_types, enabled, format, experiments } = endpoint;
    await audit(trx, actor, 'webhook_endpoint.created', row.id, { url, description, event_types, enabled, format, experiments, warnings }, now);
    // The only answer that shows the whole URL: the caller just sent it.
    return { ...endpoint, url: input.url, warnings, secret };
  });
}

export async function getEndpoint(ctx: WebhookEndpointsDeps, workspaceId: string, id: string) {
  const row = await findEndpoint(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  return toWebhookEndpoint(row, ctx.clock.now(), await experimentRefs(ctx.db, workspaceId, experimentFilterOf(row) ?? []));
}

/** What the patch changes, field by field; the URL is compared in full and recorded masked. */
function changesOf(ctx: WebhookEndpointsDeps, current: WebhookEndpointRow, patch: WebhookEndpointPatch): Record<string, { from: unknown; to: unknown }> {
  const before = toWebhookEndpoint(current, 0) as unknown as Record<string, unknown>;
  const { url, ...rest } = patch;
  const normalized: Record<string, unknown> = { ...rest };
  if (patch.event_types) normalized.event_types = patch.event_types.includes('*') ? ['*'] : patch.event_types;
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  // The masked URL sent back (a client that PATCHes what it read) keeps the URL it stands for.
  const sameUrl = url === undefined || url === current.url_masked || url === ctx.secrets.open(current.url_enc);
  if (!sameUrl) changes.url = { from: current.url_masked, to: maskEndpointUrl(url) };
  for (const [field, to] of Object.entries(normalized)) {
    if (to !== undefined && JSON.stringify(to) !== JSON.stringify(before[field])) changes[field] = { from: before[field], to };
  }
  return changes;
}

/** The audit entry names the experiments a filter changed to, not only their ids. */
function namedFilterChange(changes: Record<string, { from: unknown; to: unknown }>, refs: ExperimentRefs) {
  const change = changes.experiment_ids;
  if (!change) return changes;
  const names = Array.isArray(change.to) ? (change.to as string[]).map((id) => refs.get(id)?.name ?? id) : null;
  return { ...changes, experiment_ids: { ...change, to_names: names } };
}

/** Changes what was given; an unchanged body changes nothing and logs nothing. Re-enabling clears the failure run. */
export async function patchEndpoint(ctx: WebhookEndpointsDeps, actor: Actor, id: string, patch: WebhookEndpointPatch) {
  const warnings = patch.url === undefined ? [] : await urlWarnings(ctx, checkedUrl(patch.url));
  return ctx.db.transaction().execute(async (trx) => {
    const current = await lockEndpoint(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw notFound(id);
    const now = ctx.clock.now();
    const changes = changesOf(ctx, current, patch);
    const filter = patch.experiment_ids === undefined ? experimentFilterOf(current) : patch.experiment_ids;
    const refs = await checkedFilter(trx, actor.workspaceId, filter);
    if (Object.keys(changes).length === 0) return { ...toWebhookEndpoint(current, now, refs), warnings };
    const updated: WebhookEndpointRow = {
      ...current,
      ...(changes.url && patch.url ? { url_enc: ctx.secrets.seal(patch.url), url_masked: maskEndpointUrl(patch.url) } : {}),
      description: patch.description ?? current.description,
      event_types: changes.event_types ? JSON.stringify(changes.event_types.to) : current.event_types,
      format: patch.format ?? current.format,
      enabled: patch.enabled === undefined ? current.enabled : patch.enabled ? 1 : 0,
      experiment_ids: filter ? JSON.stringify(filter) : null,
      updated_at: now,
    };
    if (changes.enabled && patch.enabled) Object.assign(updated, { failing_since: null, disabled_reason: null });
    const { id: _id, workspace_id: _workspace, created_at: _created, ...columns } = updated;
    await updateEndpoint(trx, id, columns);
    // As when Verdict disables it: what was waiting for a retry is not sent, and the log says so now.
    if (changes.enabled && !patch.enabled) await failPendingDeliveries(trx, id, 'not retried: the endpoint was disabled', now);
    await audit(trx, actor, 'webhook_endpoint.updated', id, { changes: namedFilterChange(changes, refs), warnings }, now);
    return { ...toWebhookEndpoint(updated, now, refs), warnings };
  });
}

export async function removeEndpoint(ctx: WebhookEndpointsDeps, actor: Actor, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = await lockEndpoint(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw notFound(id);
    await deleteEndpoint(trx, id);
    await audit(trx, actor, 'webhook_endpoint.deleted', id, { url: current.url_masked }, ctx.clock.now());
  });
}

/** A new secret; the replaced one keeps signing for 24 hours, a second v1 in every signature (a second rotation retires the oldest at once). */
export async function rotateEndpointSecret(ctx: WebhookEndpointsDeps, actor: Actor, id: string) {
  const secret = newWebhookSecret();
  return ctx.db.transaction().execute(async (trx) => {
    const current = await lockEndpoint(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw notFound(id);
    const now = ctx.clock.now();
    const changes = { ...rotatedColumns(ctx.secrets, current, secret, now), updated_at: now };
    await updateEndpoint(trx, id, changes);
    await audit(trx, actor, 'webhook_endpoint.secret_rotated', id, { previous_secret_expires_at: toIso(changes.previous_secret_expires_at) }, now);
    const refs = await experimentRefs(trx, actor.workspaceId, experimentFilterOf(current) ?? []);
    return { ...toWebhookEndpoint({ ...current, ...changes }, now, refs), warnings: [], secret };
  });
}

/** Sends a `ping` event to this endpoint only (whatever its event types). */
export async function pingEndpoint(ctx: WebhookEndpointsDeps, actor: Actor, id: string) {
  return ctx.db.transaction().execute(async (trx) => {
    const endpoint = await lockEndpoint(trx, ctx.seam, actor.workspaceId, id);
    if (!endpoint) throw notFound(id);
    if (endpoint.enabled !== 1) throw problems.endpointDisabled('the endpoint is disabled; enable it (PATCH enabled: true) to send to it');
    const now = ctx.clock.now();
    const eventId = newId();
    const data = { endpoint_id: endpoint.id, message: 'A test event from Verdict: this endpoint receives deliveries.' };
    const envelope = envelopeOf(eventId, { workspaceId: actor.workspaceId, type: 'ping', data }, now);
    const summary = { headline: 'Verdict test message: this channel will receive experiment alerts.', fields: [], link: null };
    const ping = { id: eventId, type: 'ping' as const, experimentId: null, body: deliveryBody(endpoint, envelope, summary) };
    const deliveryId = await createDelivery(ctx, trx, endpoint, ping, now);
    await audit(trx, actor, 'webhook_endpoint.pinged', id, { event_id: eventId, delivery_id: deliveryId }, now);
    const delivery = await lockDelivery(trx, ctx.seam, id, deliveryId);
    return toEndpointDelivery(delivery as NonNullable<typeof delivery>);
  });
}

/** Sends a finished delivery again now (same body, same event id), with a new three-day retry window. */
export async function redeliver(ctx: WebhookEndpointsDeps, actor: Actor, id: string, deliveryId: string) {
  return ctx.db.transaction().execute(async (trx) => {
    const endpoint = await lockEndpoint(trx, ctx.seam, actor.workspaceId, id);
    if (!endpoint) throw notFound(id);
    const delivery = await lockDelivery(trx, ctx.seam, id, deliveryId);
    if (!delivery) throw problems.notFound(`no delivery with id ${deliveryId} for this endpoint`);
    if (endpoint.enabled !== 1) throw problems.endpointDisabled('the endpoint is disabled; enable it (PATCH enabled: true) to send to it');
    if (delivery.status === 'pending') throw problems.deliveryPending('an attempt of this delivery is already scheduled (see next_attempt_at)');
    const now = ctx.clock.now();
    const changes = { status: 'pending' as const, next_attempt_at: now, retry_until: now + RETRY_WINDOW_MS, updated_at: now };
    await updateDelivery(trx, delivery.id, changes);
    await enqueueAttempt(ctx, trx, {
      deliveryId: delivery.id,
      workspaceId: endpoint.workspace_id,
      attempt: delivery.attempts + 1,
      runAt: now,
      tag: 'redeliver',
    });
    await audit(trx, actor, 'webhook_endpoint.redelivered', id, { delivery_id: delivery.id, event_id: delivery.event_id }, now);
    const refs = await experimentRefs(trx, actor.workspaceId, delivery.experiment_id ? [delivery.experiment_id] : []);
    return toEndpointDelivery({ ...delivery, ...changes }, refs);
  });
}

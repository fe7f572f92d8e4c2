// Idempotency-Key for inbound webhooks (Stripe's behaviour, IETF draft-ietf-httpapi-
// idempotency-key-header): a repeat of a completed request gets the stored response and
// ingests nothing; a repeat while the first is still running gets 409; the same key with a
// different body gets 422. Keys are scoped to (workspace, source) and forgotten after 24 hours.
//
// Exactly one request owns a key at a time: the claim is an INSERT against the primary key,
// committed before the ingest starts, so a concurrent copy (on this process or another) finds
// the row. Taking over a forgotten or abandoned row is an UPDATE conditioned on the previous
// owner's random token, so of two requests racing for it only one can succeed.
import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { WebhookIdempotencyKeysTable } from '../../db/tables/webhooks.js';
import { problems } from '../../http/problems.js';
import { randomBase62 } from '../../lib/secrets.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 64;
/**
 * A claim still in flight after this long belongs to a process that died between claiming and
 * answering (an ingest takes milliseconds); the next repeat may then take the key over. The
 * same idea as the lock timeout in Brandur Leach's "Implementing Stripe-like Idempotency Keys
 * in Postgres".
 */
export const IN_FLIGHT_TIMEOUT_MS = 5 * 60 * 1000;
/** Each failed attempt means another request changed the row in between; a few suffice. */
const CLAIM_ATTEMPTS = 3;

type IdempotencyRow = Selectable<WebhookIdempotencyKeysTable>;

export interface IdempotencyScope {
  workspaceId: string;
  sourceId: string;
  key: string;
}

export type IdempotencyClaim = { kind: 'claimed'; token: string } | { kind: 'replay'; status: number; body: unknown };

/** SHA-256 of the raw bytes: what tells a true repeat from a reused key. */
export function fingerprintOf(rawBody: Uint8Array): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

/** The header's value, null when absent; 422 when empty or longer than 64 characters. */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw problems.validation(
      [{ parameter: 'Idempotency-Key', message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${value.length}` }],
      `the Idempotency-Key header must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters, got ${value.length}`,
    );
  }
  return value;
}

function freshClaim(scope: IdempotencyScope, fingerprint: string, token: string, now: number): IdempotencyRow {
  return {
    workspace_id: scope.workspaceId,
    source_id: scope.sourceId,
    idempotency_key: scope.key,
    fingerprint,
    state: 'in_flight',
    lock_token: token,
    locked_at: now,
    response_status: null,
    response_body: null,
    created_at: now,
    expires_at: now + IDEMPOTENCY_WINDOW_MS,
  };
}

async function insertClaim(db: Db, row: IdempotencyRow): Promise<boolean> {
  const result = await db
    .insertInto('webhook_idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['workspace_id', 'source_id', 'idempotency_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

async function findClaim(db: Db, scope: IdempotencyScope): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('webhook_idempotency_keys')
    .selectAll()
    .where('workspace_id', '=', scope.workspaceId)
    .where('source_id', '=', scope.sourceId)
    .where('idempotency_key', '=', scope.key)
    .executeTakeFirst();
}

/** Replaces a forgotten or abandoned row, only if nobody else replaced it since it was read. */
async function takeOver(db: Db, previous: IdempotencyRow, row: IdempotencyRow): Promise<boolean> {
  const result = await db
    .updateTable('webhook_idempotency_keys')
    .set(row)
    .where('workspace_id', '=', previous.workspace_id)
    .where('source_id', '=', previous.source_id)
    .where('idempotency_key', '=', previous.idempotency_key)
    .where('lock_token', '=', previous.lock_token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** What an existing, unexpired row means for a new request with this fingerprint. */
function judge(row: IdempotencyRow, fingerprint: string, now: number): IdempotencyClaim | 'take_over' {
  if (row.fingerprint !== fingerprint) {
    throw problems.idempotencyKeyReused(
      `Idempotency-Key "${row.idempotency_key}" was used within the last 24 hours with a different body; use a new key for a new request`,
    );
  }
  if (row.state === 'completed' && row.response_status !== null && row.response_body !== null) {
    return { kind: 'replay', status: row.response_status, body: JSON.parse(row.response_body) as unknown };
  }
  if (row.locked_at + IN_FLIGHT_TIMEOUT_MS <= now) return 'take_over';
  throw problems.idempotencyInFlight(`a request with Idempotency-Key "${row.idempotency_key}" is still being processed; retry shortly to receive its response`);
}

/**
 * Claims the key for this request, or answers with what the key already stands for: the
 * stored response (replay), 409 while its first request runs, 422 for a different body.
 */
export async function claimIdempotencyKey(db: Db, scope: IdempotencyScope, fingerprint: string, now: number): Promise<IdempotencyClaim> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt += 1) {
    const token = randomBase62(16);
    const claim = freshClaim(scope, fingerprint, token, now);
    if (await insertClaim(db, claim)) return { kind: 'claimed', token };
    const existing = await findClaim(db, scope);
    if (!existing) continue; // released or purged between the two statements
    const verdict = existing.expires_at <= now ? 'take_over' : judge(existing, fingerprint, now);
    if (verdict !== 'take_over') return verdict;
    if (await takeOver(db, existing, claim)) return { kind: 'claimed', token };
  }
  throw problems.idempotencyInFlight(`requests with Idempotency-Key "${scope.key}" are racing; retry shortly`);
}

/** Stores the response for replays; run in the transaction that records the delivery. */
export async function completeIdempotencyKey(
  executor: Executor,
  scope: IdempotencyScope,
  token: string,
  response: { status: number; body: unknown },
): Promise<boolean> {
  const result = await executor
    .updateTable('webhook_idempotency_keys')
    .set({ state: 'completed', response_status: response.status, response_body: JSON.stringify(response.body) })
    .where('workspace_id', '=', scope.workspaceId)
    .where('source_id', '=', scope.sourceId)
    .where('idempotency_key', '=', scope.key)
    .where('lock_token', '=', token)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Forgets a claim whose request failed before ingesting anything, so the sender can retry. */
export async function releaseIdempotencyKey(db: Db, scope: IdempotencyScope, token: string): Promise<void> {
  await db
    .deleteFrom('webhook_idempotency_keys')
    .where('workspace_id', '=', scope.workspaceId)
    .where('source_id', '=', scope.sourceId)
    .where('idempotency_key', '=', scope.key)
    .where('lock_token', '=', token)
    .execute();
}

/** Removes keys past their 24 hours (expired rows already count as absent; this keeps the table small). */
export async function purgeExpiredIdempotencyKeys(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('webhook_idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

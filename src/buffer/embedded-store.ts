import { sql } from 'kysely';
import type { Executor, Tx } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import { newId } from '../lib/ids.js';
import { BulkInsert } from '../db/bulk-insert.js';
import { DEDUPE_WINDOW_MS, type BufferedEvent } from './types.js';

// The SQL of the embedded buffer: the event_buffer and event_dedupe tables.

/**
 * A committed group is stored in chunks of at most this many events, the drainer's unit of work.
 * A drain takes whole chunks and the writer's appends wait behind it (one SQLite write lock):
 * 100 events go into the events table and its three indexes in 5-12 ms, where a batch request's
 * 500 held single events for 25-60 ms (docs/events.md).
 */
export const EVENTS_PER_CHUNK = 100;

export interface DedupeKey {
  workspace_id: string;
  client_event_id: string;
}

/** A key claimed until `expires_at`: one row of event_dedupe. */
export type DedupeClaim = DedupeKey & { expires_at: number };

/** One stored chunk of a committed group: one row of event_buffer. */
export interface ChunkRow {
  id: string;
  event_count: number;
  payload: string;
  created_at: number;
}

export const insertChunkRows = new BulkInsert<ChunkRow>(['id', 'event_count', 'payload', 'created_at'], (executor, rows) =>
  executor.insertInto('event_buffer').values(rows),
);

export function dedupeKeyOf(workspaceId: string, clientEventId: string): string {
  return `${workspaceId}\u0000${clientEventId}`;
}

// A key is claimed when it is new, or when it has expired but the purge job has not removed it
// yet (its expiry is at most the claim's own expiry minus the window, that is, at most now):
// client_event_id is unique for DEDUPE_WINDOW_MS, not until the next purge.
export const insertDedupeRows = new BulkInsert<DedupeClaim>(['workspace_id', 'client_event_id', 'expires_at'], (executor, rows) =>
  executor
    .insertInto('event_dedupe')
    .values(rows)
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'client_event_id'])
        .doUpdateSet({ expires_at: (eb) => eb.ref('excluded.expires_at') })
        .where('event_dedupe.expires_at', '<=', sql<number>`excluded.expires_at - ${sql.lit(DEDUPE_WINDOW_MS)}`),
    )
    .returning(['workspace_id', 'client_event_id']),
);

function byKey(a: DedupeKey, b: DedupeKey): number {
  if (a.workspace_id !== b.workspace_id) return a.workspace_id < b.workspace_id ? -1 : 1;
  return a.client_event_id < b.client_event_id ? -1 : a.client_event_id > b.client_event_id ? 1 : 0;
}

/**
 * Claims the given keys until `expiresAt` and returns the ones that were new. A key another
 * transaction holds waits for it (PostgreSQL) or cannot happen (SQLite has one writer), so two
 * concurrent claims of one key never both win. Keys are inserted in one global order so that
 * concurrent groups on PostgreSQL cannot deadlock on each other's keys.
 */
export async function claimDedupeKeys(trx: Tx, keys: DedupeKey[], expiresAt: number): Promise<Set<string>> {
  const inserted = await insertDedupeRows.execute<DedupeKey>(trx, claimsOf(keys, expiresAt));
  return new Set(inserted.map((row) => dedupeKeyOf(row.workspace_id, row.client_event_id)));
}

/** The rows that claim `keys`, in the one global order every claim inserts them in. */
export function claimsOf(keys: DedupeKey[], expiresAt: number): DedupeClaim[] {
  return [...keys].sort(byKey).map((key) => ({ workspace_id: key.workspace_id, client_event_id: key.client_event_id, expires_at: expiresAt }));
}

export async function appendChunks(trx: Tx, events: BufferedEvent[], now: number): Promise<void> {
  await insertChunkRows.execute(trx, chunksOf(events, now));
}

/** The events cut into the chunks the drainer takes, each one row. */
export function chunksOf(events: BufferedEvent[], now: number): ChunkRow[] {
  const chunks: ChunkRow[] = [];
  for (let start = 0; start < events.length; start += EVENTS_PER_CHUNK) {
    const chunk = events.slice(start, start + EVENTS_PER_CHUNK);
    chunks.push({ id: newId(), event_count: chunk.length, payload: JSON.stringify(chunk), created_at: now });
  }
  return chunks;
}

export interface ClaimedChunks {
  ids: string[];
  events: BufferedEvent[];
  /** Chunks were left for the next call. */
  more: boolean;
}

/**
 * Takes the oldest chunks, up to `maxEvents` events (at least one chunk), for the caller's
 * transaction. On PostgreSQL rows another drainer holds are skipped, so drainers on several
 * processes share the work without waiting on each other.
 */
export async function claimChunks(trx: Executor, seam: DialectSeam, maxEvents: number): Promise<ClaimedChunks> {
  const headLimit = Math.max(1, Math.ceil(maxEvents / 2));
  const heads = await seam.skipLocked(trx.selectFrom('event_buffer').select(['id', 'event_count']).orderBy('id').limit(headLimit)).execute();
  const ids: string[] = [];
  let total = 0;
  for (const head of heads) {
    if (ids.length > 0 && total + head.event_count > maxEvents) break;
    ids.push(head.id);
    total += head.event_count;
  }
  const more = heads.length > ids.length || heads.length === headLimit;
  if (ids.length === 0) return { ids, events: [], more: false };
  const rows = await trx.selectFrom('event_buffer').select(['id', 'payload']).where('id', 'in', ids).orderBy('id').execute();
  const events = rows.flatMap((row) => JSON.parse(row.payload) as BufferedEvent[]);
  return { ids, events, more };
}

export async function deleteChunks(trx: Tx, ids: string[]): Promise<void> {
  if (ids.length > 0) await trx.deleteFrom('event_buffer').where('id', 'in', ids).execute();
}

/** Deletes the given chunks and returns how many events those that were still there held. */
export async function releaseChunks(executor: Executor, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const released = await executor.deleteFrom('event_buffer').where('id', 'in', ids).returning('event_count').execute();
  return released.reduce((sum, row) => sum + Number(row.event_count), 0);
}

export async function countPending(executor: Executor): Promise<number> {
  const row = await executor
    .selectFrom('event_buffer')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('event_count'), eb.lit(0)).as('pending'))
    .executeTakeFirst();
  return Number(row?.pending ?? 0);
}

/**
 * Deletes about `limit` of the oldest expired keys (ties on the boundary go too); the caller
 * repeats while a full batch came back, so a large purge never holds one long transaction.
 */
export async function deleteExpiredKeys(executor: Executor, now: number, limit: number): Promise<number> {
  const boundary = await executor
    .selectFrom('event_dedupe')
    .select('expires_at')
    .where('expires_at', '<', now)
    .orderBy('expires_at')
    .offset(limit - 1)
    .limit(1)
    .executeTakeFirst();
  const result = await executor
    .deleteFrom('event_dedupe')
    .where('expires_at', boundary ? '<=' : '<', boundary ? boundary.expires_at : now)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

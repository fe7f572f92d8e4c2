import { BulkInsert } from '../../db/bulk-insert.js';
import { DEDUPE_WINDOW_MS, type BufferedEvent } from '../../buffer/types.js';
import type { Executor } from '../../db/database.js';

const EVENT_COLUMNS = ['id', 'workspace_id', 'unit_id', 'event_key', 'properties', 'occurred_at', 'received_at', 'late', 'client_event_id'] as const;

// Insert-or-ignore on every unique constraint makes the insert idempotent: an event drained
// twice (same id) or a client_event_id stored before leaves one row.
const insertEventRows = new BulkInsert<BufferedEvent>(EVENT_COLUMNS, (executor, rows) =>
  executor
    .insertInto('events')
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .returning('id'),
);

function byDedupeKey(a: BufferedEvent, b: BufferedEvent): number {
  if (a.workspace_id !== b.workspace_id) return a.workspace_id < b.workspace_id ? -1 : 1;
  const left = a.client_event_id ?? '';
  const right = b.client_event_id ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Writes drained events into the events table. Rows go in one order (by key) so concurrent
 * drainers on PostgreSQL cannot deadlock on each other's unique-index entries.
 */
export async function insertEvents(executor: Executor, events: BufferedEvent[]): Promise<void> {
  const sorted = [...events].sort(byDedupeKey);
  const stored = new Set((await insertEventRows.execute<{ id: string }>(executor, sorted)).map((row) => row.id));
  const skipped = sorted.filter((event) => !stored.has(event.id) && event.client_event_id !== null);
  if (skipped.length > 0) await storeReusedClientIds(executor, skipped);
}

// The drain runs on the embedded buffer's writer thread (src/buffer/thread-writer.ts), which loads it from here.
insertEvents.writerTask = 'events.insert';

/**
 * client_event_id is unique per workspace for 30 days (docs/events.md "De-duplication"). The unique index
 * on events keeps a duplicate out, but an id reused after the window was acknowledged as a new
 * event and must be stored: the older event gives the id up (its client_event_id becomes NULL)
 * and the new one is inserted. Runs only for the events the insert skipped, which are rare.
 */
async function storeReusedClientIds(executor: Executor, skipped: BufferedEvent[]): Promise<void> {
  const reused: BufferedEvent[] = [];
  for (const event of skipped) {
    const holder = await executor
      .selectFrom('events')
      .select(['id', 'received_at'])
      .where('workspace_id', '=', event.workspace_id)
      .where('client_event_id', '=', event.client_event_id)
      .executeTakeFirst();
    // No holder or the same event: a second drain of an event already stored.
    if (!holder || holder.id === event.id || event.received_at - holder.received_at < DEDUPE_WINDOW_MS) continue;
    await executor.updateTable('events').set({ client_event_id: null }).where('id', '=', holder.id).execute();
    reused.push(event);
  }
  if (reused.length > 0) await insertEventRows.execute(executor, reused);
}

import { BulkInsert } from '../../db/bulk-insert.js';
import type { BufferedEvent } from '../../buffer/types.js';
import type { Executor } from '../../db/database.js';

const EVENT_COLUMNS = ['id', 'workspace_id', 'unit_id', 'event_key', 'properties', 'occurred_at', 'received_at', 'late', 'client_event_id'] as const;

// Insert-or-ignore on every unique constraint makes the insert idempotent: an event drained
// twice (same id) or a client_event_id stored before leaves one row.
const insertEventRows = new BulkInsert<BufferedEvent>(EVENT_COLUMNS, (executor, rows) =>
  executor
    .insertInto('events')
    .values(rows)
    .onConflict((oc) => oc.doNothing()),
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
  await insertEventRows.execute(executor, [...events].sort(byDedupeKey));
}

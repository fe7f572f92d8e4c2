import type { BufferedEvent } from '../../buffer/types.js';
import type { Executor } from '../../db/database.js';

/** Rows per INSERT: 9 columns each, well inside both databases' bound-parameter limits. */
const ROWS_PER_STATEMENT = 500;

function byDedupeKey(a: BufferedEvent, b: BufferedEvent): number {
  if (a.workspace_id !== b.workspace_id) return a.workspace_id < b.workspace_id ? -1 : 1;
  const left = a.client_event_id ?? '';
  const right = b.client_event_id ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * Writes drained events into the events table. Insert-or-ignore on every unique constraint
 * makes it idempotent: an event drained twice (same id) or a client_event_id stored before
 * leaves one row. Rows go in one order (by key) so concurrent drainers on PostgreSQL cannot
 * deadlock on each other's unique-index entries.
 */
export async function insertEvents(executor: Executor, events: BufferedEvent[]): Promise<void> {
  const sorted = [...events].sort(byDedupeKey);
  for (let start = 0; start < sorted.length; start += ROWS_PER_STATEMENT) {
    await executor
      .insertInto('events')
      .values(sorted.slice(start, start + ROWS_PER_STATEMENT))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

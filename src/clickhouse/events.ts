/**
 * The drain into ClickHouse: the buffer's drainer calls this inside its transaction and commits
 * (releasing the events from the buffer) only after ClickHouse acknowledged the insert. A drainer
 * killed between the two leaves the events buffered, and the next drain inserts them again:
 * - the insert carries a de-duplication token made of the batch's event ids, so a retried batch
 *   that is the same is dropped by ClickHouse itself;
 * - a batch cut differently (the buffer grew meanwhile) still inserts some rows twice; they share
 *   the whole sorting key, and every read of events collapses them (FINAL, schema.ts).
 * Ingest never waits on this: while ClickHouse is away the drain fails, the events stay in the
 * buffer (429 once it is full) and the drainer retries.
 */
import { createHash } from 'node:crypto';
import type { BufferedEvent, PersistEvents } from '../buffer/types.js';
import type { ClickHouse } from './client.js';

function tokenOf(events: readonly BufferedEvent[]): string {
  const hash = createHash('sha256');
  for (const event of events) hash.update(event.id).update('\n');
  return hash.digest('hex');
}

/** Inserts drained events into ClickHouse's events table. */
export function persistToClickHouse(ch: ClickHouse): PersistEvents {
  return async (_executor, events) => {
    if (events.length === 0) return;
    const values = events.map((event) => ({
      id: event.id,
      workspace_id: event.workspace_id,
      unit_id: event.unit_id,
      event_key: event.event_key,
      properties: event.properties,
      occurred_at: event.occurred_at,
      received_at: event.received_at,
      late: event.late,
    }));
    await ch.client.insert({
      table: 'events',
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: tokenOf(events), insert_deduplicate: 1 },
    });
  };
}

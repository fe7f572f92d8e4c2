/**
 * The drain into ClickHouse: the buffer's drainer calls this inside its transaction and commits
 * (releasing the events from the buffer) only after ClickHouse acknowledged the insert. A drainer
 * killed between the two leaves the events buffered, and the next drain inserts them again. The
 * copies share the whole sorting key, and every read of events collapses them (FINAL, schema.ts;
 * one row per id in the incremental refresh). The insert is not de-duplicated by ClickHouse
 * (insert_deduplicate = 0): a non-replicated table adds a block's hash to its de-duplication log
 * before the part is committed, so a kill -9 between the two can leave the hash without the rows,
 * and the retried drain of those acknowledged events would be dropped as a repeat. With the
 * per-batch token, test/events/clickhouse-kill.test.ts once found 18 acknowledged events missing
 * after a kill. The setting is given on every insert: the embedded engine keeps a statement's
 * settings (SET) for the statements after it.
 * Ingest never waits on this: while ClickHouse is away the drain fails, the events stay in the
 * buffer (429 once it is full) and the drainer retries.
 *
 * Each drain first takes the next drain sequence number in the primary database's transaction
 * (clickhouse_drain_sequence; the row lock holds other drainers until this one commits) and writes
 * it on its rows (drain_seq): a drain numbered at or below the committed number has been
 * acknowledged by ClickHouse in full, so the committed number is the incremental analysis's
 * watermark (features/analysis/clickhouse-rollups.ts). A drain killed before its commit gives its
 * number back; rows it left in ClickHouse carry a number that a committed drain holds too, and
 * their events, drained again, are copies that the refresh counts once (by id).
 *
 * Event retention (features/retention/purge.ts) deletes expired events here too.
 */
import { sql } from 'kysely';
import type { PersistEvents } from '../buffer/types.js';
import type { Executor } from '../db/database.js';
import type { ClickHouse } from './client.js';

/** The next drain sequence number, taken in the drainer's transaction (and given back if it rolls back). */
async function nextDrainSeq(executor: Executor): Promise<number> {
  const result = await sql<{ seq: unknown }>`UPDATE clickhouse_drain_sequence SET seq = seq + 1 WHERE id = 1 RETURNING seq`.execute(executor);
  const seq = Number(result.rows[0]?.seq);
  if (!Number.isSafeInteger(seq)) throw new Error('clickhouse_drain_sequence has no row: run `verdict migrate`');
  return seq;
}

/** Inserts drained events into ClickHouse's events table. */
export function persistToClickHouse(ch: ClickHouse): PersistEvents {
  return async (executor, events) => {
    if (events.length === 0) return;
    const drainSeq = await nextDrainSeq(executor);
    const values = events.map((event) => ({
      id: event.id,
      workspace_id: event.workspace_id,
      unit_id: event.unit_id,
      event_key: event.event_key,
      properties: event.properties,
      occurred_at: event.occurred_at,
      received_at: event.received_at,
      late: event.late,
      drain_seq: drainSeq,
    }));
    await ch.client.insert({
      table: 'events',
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplicate: 0 },
    });
  };
}

/** Where rows are deleted: the table itself, or on a cluster every shard's local table (a Distributed table takes no DELETE). */
function deleteTarget(ch: ClickHouse, table: string): string {
  return ch.cluster === null ? table : `${table}_local ON CLUSTER ${ch.cluster}`;
}

/**
 * Deletes the rows of `table` that `where` selects (lightweight DELETE, which returns once the rows
 * are gone from every read); returns how many there were, counted as reads see them (FINAL).
 */
async function deleteRows(ch: ClickHouse, table: string, where: string, params: Record<string, unknown>): Promise<number> {
  const counted = await ch.client.query({
    query: `SELECT toString(count()) AS n FROM ${table} FINAL WHERE ${where}`,
    query_params: params,
    format: 'JSONEachRow',
  });
  const n = Number((await counted.json<{ n: string }>())[0]?.n ?? 0);
  if (n > 0) await ch.client.command({ query: `DELETE FROM ${deleteTarget(ch, table)} WHERE ${where}`, query_params: params });
  return n;
}

/** Retention: removes a workspace's events that occurred before `before`; returns how many. */
export function deleteClickHouseEvents(ch: ClickHouse, workspaceId: string, before: number): Promise<number> {
  return deleteRows(ch, 'events', 'workspace_id = {workspace:String} AND occurred_at < {before:Int64}', { workspace: workspaceId, before });
}

/** Retention: removes ClickHouse's copy of an archived experiment's exposures; returns how many. */
export function deleteClickHouseExposures(ch: ClickHouse, experimentId: string): Promise<number> {
  return deleteRows(ch, 'exposures', 'experiment_id = {experiment:String}', { experiment: experimentId });
}

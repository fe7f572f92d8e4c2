/**
 * The drain into ClickHouse: the buffer's drainer calls this inside its transaction and commits
 * (releasing the events from the buffer) only after ClickHouse acknowledged the insert. Reads of
 * events need no FINAL (docs/analysis.md "ClickHouse"): no acknowledged event is ever stored twice
 * where a read counts it.
 *
 * - Each drain first takes the next drain sequence number in the primary database's transaction
 *   (clickhouse_drain_sequence; the row lock holds other drainers until this one commits) and
 *   writes it on its rows (drain_seq). Every drain numbered at or below the committed number has
 *   been acknowledged by ClickHouse in full and committed in the primary database: reads count
 *   only those rows (`drain_seq <= committed`, committedDrain), and the committed number is the
 *   incremental analysis's watermark (features/analysis/clickhouse/rollups.ts).
 * - A drain killed (or failed) between its insert and its commit gives its number back, so its rows
 *   carry a number above the committed one (never read), and its events stay in the buffer. The
 *   next drain takes that number again and, holding the lock, deletes every row under it before
 *   inserting its own: rows of an attempt that never committed are gone before the number commits.
 * - A batch the buffer delivers again (Redis: a drainer died or failed between the database's
 *   commit and the buffer's acknowledgement) may hold committed events: those already stored are
 *   left out of the insert, as the events table's primary key leaves them out in SQL.
 *
 * Every attempt inserts under an insert de-duplication token of its own (a random UUID), so
 * ClickHouse never drops an insert as a repeat of an earlier block: the embedded engine (chdb 3.4)
 * drops a block identical to an earlier one even with insert_deduplicate = 0, which would lose the
 * events of a drain retried with the same batch after its killed attempt's rows were deleted
 * (test/analysis/clickhouse.test.ts). Without the token, a non-replicated table could also keep a
 * block's hash in its de-duplication log without its rows after a kill -9 between the two
 * (test/events/clickhouse-kill.test.ts once found 18 acknowledged events missing). A ClickHouse
 * *server* that completes an insert after its client died and a later drain committed the number
 * could still leave rows under a committed number; the embedded engine dies with its process, so
 * it cannot.
 * Ingest never waits on this: while ClickHouse is away the drain fails, the events stay in the
 * buffer (429 once it is full) and the drainer retries.
 *
 * An integer literal beyond 64 bits in an event's properties is stored in exponent form (the same
 * number; json-text.ts): ClickHouse's JSON functions would read no number at all from the text.
 * Event retention (features/retention/purge.ts) deletes expired events here too.
 */
import { sql } from 'kysely';
import type { BufferedEvent, OutsideEventStore, PersistEvents } from '../buffer/types.js';
import type { Executor } from '../db/database.js';
import type { ClickHouse } from './client.js';
import { insertDrainedEvents } from './event-rows.js';

/** The next drain sequence number, taken in the drainer's transaction (and given back if it rolls back). */
async function nextDrainSeq(executor: Executor): Promise<number> {
  const result = await sql<{ seq: unknown }>`UPDATE clickhouse_drain_sequence SET seq = seq + 1 WHERE id = 1 RETURNING seq`.execute(executor);
  const seq = Number(result.rows[0]?.seq);
  if (!Number.isSafeInteger(seq)) throw new Error('clickhouse_drain_sequence has no row: run `verdict migrate`');
  return seq;
}

/** The committed drain number: events in ClickHouse under a higher one belong to no committed drain and are not read. */
export async function committedDrain(executor: Executor): Promise<number> {
  const result = await sql<{ seq: unknown }>`SELECT seq FROM clickhouse_drain_sequence WHERE id = 1`.execute(executor);
  return Number(result.rows[0]?.seq ?? 0);
}

async function firstColumn(ch: ClickHouse, query: string, params: Record<string, unknown>): Promise<unknown[]> {
  const result = await ch.client.query({ query, query_params: params, format: 'JSONCompactEachRow' });
  return (await result.json<unknown[]>()).map((row) => row[0]);
}

/** Deletes the rows an earlier attempt of drain `seq` left (it never committed: the number came back to us). */
async function dropUncommitted(ch: ClickHouse, seq: number): Promise<void> {
  const [found] = await firstColumn(ch, 'SELECT count() > 0 FROM events WHERE drain_seq = {seq:UInt64}', { seq });
  if (Number(found) === 1)
    await ch.client.command({ query: `DELETE FROM ${deleteTarget(ch, 'events')} WHERE drain_seq = {seq:UInt64}`, query_params: { seq } });
}

/** The events of a delivered-again batch that no committed drain stored yet. */
async function notStored(ch: ClickHouse, events: BufferedEvent[], seq: number): Promise<BufferedEvent[]> {
  const distinct = (pick: (event: BufferedEvent) => string) => [...new Set(events.map(pick))];
  const stored = await firstColumn(
    ch,
    `SELECT DISTINCT id FROM events WHERE workspace_id IN {workspaces:Array(String)} AND event_key IN {keys:Array(String)}
      AND unit_id IN {units:Array(String)} AND id IN {ids:Array(String)} AND drain_seq < {seq:UInt64}`,
    {
      workspaces: distinct((event) => event.workspace_id),
      keys: distinct((event) => event.event_key),
      units: distinct((event) => event.unit_id),
      ids: distinct((event) => event.id),
      seq,
    },
  );
  const known = new Set(stored.map(String));
  return events.filter((event) => !known.has(event.id));
}

/**
 * The highest drain number this process handed to each embedded engine (by its client), so that
 * the look-up for an earlier attempt's rows runs only when one can exist. The embedded engine is
 * written by the one process that holds its directory, and drain numbers are taken one at a time
 * under the sequence's row lock: rows under number N exist only if this process inserted under N
 * before, i.e. N is at or below the highest number it inserted under (its attempt rolled back and
 * the number came back). A fresh process knows nothing and looks once. A server can be written
 * by the drainers of several processes: each drain looks there.
 */
const highestAttempted = new WeakMap<object, number>();

function mayHoldRowsUnder(ch: ClickHouse, drainSeq: number): boolean {
  if (ch.kind !== 'embedded') return true;
  const highest = highestAttempted.get(ch.client);
  return highest === undefined || drainSeq <= highest;
}

function recordAttempt(ch: ClickHouse, drainSeq: number): void {
  if (ch.kind === 'embedded') highestAttempted.set(ch.client, Math.max(drainSeq, highestAttempted.get(ch.client) ?? 0));
}

/** Inserts drained events into ClickHouse's events table. */
export function persistToClickHouse(ch: ClickHouse): PersistEvents {
  return async (executor, events, options) => {
    if (events.length === 0) return;
    const drainSeq = await nextDrainSeq(executor);
    if (mayHoldRowsUnder(ch, drainSeq)) await dropUncommitted(ch, drainSeq);
    const fresh = options?.redelivered ? await notStored(ch, events, drainSeq) : events;
    if (fresh.length === 0) return;
    // Recorded before the insert: an insert that fails may still have written some of its rows.
    recordAttempt(ch, drainSeq);
    await insertDrainedEvents(ch, fresh, drainSeq);
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

/**
 * Retention's side of ClickHouse's events: its events, and its copy of exposures with the marks
 * saying how far each experiment was copied (gone with the copy, so a later copy starts from
 * scratch rather than from its watermark).
 */
export function clickHouseOutsideStore(ch: ClickHouse, db: Executor): OutsideEventStore {
  return {
    deleteEvents: (workspaceId, before) => deleteClickHouseEvents(ch, workspaceId, before),
    async deleteExposureCopy(experimentId) {
      const removed = await deleteClickHouseExposures(ch, experimentId);
      await db.deleteFrom('clickhouse_exposure_marks').where('experiment_id', '=', experimentId).execute();
      return removed;
    },
  };
}

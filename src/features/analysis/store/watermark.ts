/**
 * The watermark of a rollup refresh: what the refresh has seen, in the order rows became visible
 * to readers (docs/analysis.md "The watermark"). Read inside the refresh's transaction, so it
 * describes exactly the rows that transaction reads.
 *
 * - PostgreSQL: several drainers commit at once, and a transaction with a smaller id (or earlier
 *   ULIDs) may commit after one with a larger. Events and exposures record their writing
 *   transaction (drain_xid, change_xid: pg_current_xact_id(), xid8), and the refresh stores its
 *   own snapshot (pg_current_snapshot(), taken in REPEATABLE READ, so it is the one its reads
 *   use). A row is new to the next refresh when its transaction is not visible in that
 *   snapshot: pg_visible_in_snapshot is false. Rows written before migration 0012 have NULL
 *   there and were visible to every refresh.
 * - SQLite has one writer at a time and the refresh holds the write lock, so rowid order is
 *   commit order: an event or exposure is new when its rowid is above the last one seen, an
 *   exposure superseded since when its superseded_seq is above the last one seen. VACUUM may
 *   renumber rowids; the watermark keeps the id of the row at its rowid, and a refresh that
 *   finds another row there rebuilds instead of trusting it.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';

export interface RowMark {
  rowid: number;
  id: string;
}

export type Watermark = { kind: 'postgres'; snapshot: string } | { kind: 'sqlite'; events: RowMark | null; exposures: RowMark | null; superseded: number };

async function lastRow(executor: Executor, table: 'events' | 'exposures'): Promise<RowMark | null> {
  const result = await sql<{ rowid: unknown; id: string }>`SELECT rowid AS rowid, id FROM ${sql.table(table)} ORDER BY rowid DESC LIMIT 1`.execute(executor);
  const row = result.rows[0];
  return row ? { rowid: Number(row.rowid), id: row.id } : null;
}

/** The watermark of what the current transaction sees. */
export async function currentWatermark(executor: Executor, seam: DialectSeam): Promise<Watermark> {
  if (seam.name === 'postgres') {
    const result = await sql<{ snapshot: string }>`SELECT pg_current_snapshot()::text AS snapshot`.execute(executor);
    return { kind: 'postgres', snapshot: result.rows[0]?.snapshot as string };
  }
  const superseded = await sql<{ seq: unknown }>`SELECT MAX(superseded_seq) AS seq FROM exposures WHERE superseded_seq IS NOT NULL`.execute(executor);
  return {
    kind: 'sqlite',
    events: await lastRow(executor, 'events'),
    exposures: await lastRow(executor, 'exposures'),
    superseded: Number(superseded.rows[0]?.seq ?? 0),
  };
}

/**
 * SQLite: the watermark `events` events past `from` (in rowid order), with `to`'s exposures, or
 * null when `to` is at most that far: a refresh bounded to it adds the new events in rounds while
 * every changed exposure is taken at once (sql/rollup/refresh.ts).
 */
export async function eventRoundEnd(executor: Executor, from: Watermark, to: Watermark, events: number): Promise<Watermark | null> {
  if (from.kind !== 'sqlite' || to.kind !== 'sqlite' || to.events === null) return null;
  // Rowids are distinct integers, so (from, to] holds at most their difference of events: when
  // that is within the round, the round reaches `to` without counting them (the statement below
  // walks the rowids of every new event of the round).
  if (to.events.rowid - (from.events?.rowid ?? 0) <= Math.floor(events)) return null;
  const result = await sql<{ rowid: unknown; id: string }>`SELECT rowid AS rowid, id FROM events
    WHERE rowid > ${from.events?.rowid ?? 0} ORDER BY rowid LIMIT 1 OFFSET ${sql.lit(Math.max(0, Math.floor(events) - 1))}`.execute(executor);
  const row = result.rows[0];
  if (!row || Number(row.rowid) >= to.events.rowid) return null;
  return { ...to, events: { rowid: Number(row.rowid), id: row.id } };
}

/**
 * SQLite: `current` with its events capped at `until`, the last event a refresh in rounds set out
 * to reach (its first round's), or at `from`'s when another refresh already went past that: the
 * rounds never chase events that arrived after the refresh began, and never go back.
 */
export function capEvents(current: Watermark, from: Watermark, until: RowMark | null): Watermark {
  if (current.kind !== 'sqlite' || from.kind !== 'sqlite' || until === null || current.events === null) return current;
  if (current.events.rowid <= until.rowid) return current;
  const reached = from.events !== null && from.events.rowid >= until.rowid ? from.events : until;
  return { ...current, events: reached };
}

async function stillAt(executor: Executor, table: 'events' | 'exposures', mark: RowMark | null): Promise<boolean> {
  if (mark === null) return true;
  const result = await sql<{ id: string }>`SELECT id FROM ${sql.table(table)} WHERE rowid = ${mark.rowid}`.execute(executor);
  return result.rows[0]?.id === mark.id;
}

/** Whether a stored watermark can be trusted here (the same kind of database, rowids not renumbered). */
export async function watermarkHolds(executor: Executor, seam: DialectSeam, mark: Watermark): Promise<boolean> {
  if (mark.kind !== seam.name) return false;
  if (mark.kind === 'postgres') return true;
  return (await stillAt(executor, 'events', mark.events)) && (await stillAt(executor, 'exposures', mark.exposures));
}

/**
 * The snapshot's xmin, given to the statement as a value (not as an expression of the snapshot),
 * so the planner sees how few rows lie above it and reads them through the xid index.
 */
function xminOf(snapshot: string): string {
  return snapshot.split(':')[0] as string;
}

/** Rows of `alias` whose transaction (`column`) committed after the PostgreSQL watermark. */
function committedAfter(alias: string, column: string, snapshot: string): RawBuilder<unknown> {
  const stamp = sql.ref(`${alias}.${column}`);
  return sql`(${stamp} >= CAST(${xminOf(snapshot)} AS xid8) AND NOT pg_visible_in_snapshot(${stamp}, CAST(${snapshot} AS pg_snapshot)))`;
}

/**
 * The events (`e`) of the workspace and keys committed after the watermark, read from what is new
 * only: the xid index on PostgreSQL; the rowid range on SQLite, where the other terms are kept
 * from indexes (unary +), or the planner would prefer events_metric_idx and read every event of
 * the keys.
 */
export function eventsAfter(mark: Watermark, workspaceId: string, eventKeys: readonly string[]): RawBuilder<unknown> {
  const keys = sql.join([...eventKeys]);
  if (mark.kind === 'postgres') return sql`${committedAfter('e', 'drain_xid', mark.snapshot)} AND e.workspace_id = ${workspaceId} AND e.event_key IN (${keys})`;
  return sql`e.rowid > ${mark.events?.rowid ?? 0} AND +e.workspace_id = ${workspaceId} AND +e.event_key IN (${keys})`;
}

/** The unit ids of the experiment whose exposures were inserted or superseded after the watermark. */
export function unitsChangedAfter(mark: Watermark, experimentId: string): RawBuilder<unknown> {
  if (mark.kind === 'postgres') {
    return sql`SELECT c.unit_id FROM exposures AS c WHERE c.experiment_id = ${experimentId} AND ${committedAfter('c', 'change_xid', mark.snapshot)}`;
  }
  // Unary + keeps the experiment's index out: new rows come from the rowid range, superseded ones from their index.
  return sql`SELECT c.unit_id FROM exposures AS c WHERE c.rowid > ${mark.exposures?.rowid ?? 0} AND +c.experiment_id = ${experimentId}
    UNION SELECT c.unit_id FROM exposures AS c WHERE c.superseded_seq > ${mark.superseded} AND +c.experiment_id = ${experimentId}`;
}

/**
 * The unit ids of the experiment whose exposures changed after `from` (as unitsChangedAfter), or
 * null when none can have changed by `to` because no exposure was inserted or superseded between
 * the two (SQLite; a PostgreSQL snapshot does not say, so there it is always the query). A SQLite
 * refresh's rounds after its first take no new exposure, and without this each of them still ran
 * the statements that replace changed units (a third of a 100-event round's SQL).
 */
export function unitsChangedBetween(from: Watermark, to: Watermark, experimentId: string): RawBuilder<unknown> | null {
  const none = from.kind === 'sqlite' && to.kind === 'sqlite' && (to.exposures?.rowid ?? 0) <= (from.exposures?.rowid ?? 0) && to.superseded <= from.superseded;
  return none ? null : unitsChangedAfter(from, experimentId);
}

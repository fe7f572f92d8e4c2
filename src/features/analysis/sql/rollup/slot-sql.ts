/**
 * The statements of a rollup refresh (docs/analysis.md "Incremental analysis"), on SQLite and
 * PostgreSQL. Each writes rows of analysis_rollup_values for one metric (a slot) from raw events
 * joined to the refreshed units (analysis_rollup_units `x`), with the metric's window and CUPED
 * lookback applied as the rows are written:
 * - window:   x.exposed_at <= occurred_at < x.exposed_at + window (cnt, vsum, vcnt);
 * - lookback: x.exposed_at - lookback <= occurred_at < x.exposed_at (pre_cnt, pre_vsum, pre_vcnt);
 * - both before the experiment's stop, when it has stopped.
 * What is new since the last refresh (events, changed exposures) is a condition of the watermark
 * (store/watermark.ts), passed in as SQL.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import type { DialectSeam } from '../../../../db/dialect.js';
import type { RollupSlot } from '../../store/contract.js';

export interface RollupScope {
  workspaceId: string;
  experimentId: string;
  /** The experiment's stop: events at or after it never count. */
  stoppedAt: number | null;
  /**
   * SQLite builds in steps (sql/rollup/steps.ts) and refreshes in rounds (sql/rollup/refresh.ts): only the
   * events up to this rowid, the watermark's.
   */
  eventsThroughRowid?: number | undefined;
}

const COLUMNS = sql`experiment_id, unit_id, metric_id, cnt, vsum, vcnt, pre_cnt, pre_vsum, pre_vcnt`;

/** The six sums of one unit's joined events `e` (grouped per unit `x`). */
function slotAggregates(seam: DialectSeam, slot: RollupSlot): RawBuilder<unknown> {
  const inWindow = sql`e.occurred_at >= x.exposed_at`;
  const count = (when: RawBuilder<unknown>) => sql`SUM(CASE WHEN ${when} THEN 1 ELSE 0 END)`;
  if (slot.value_keys === null) return sql`${count(inWindow)}, 0, 0, ${count(sql`NOT (${inWindow})`)}, 0, 0`;
  const value = seam.jsonNumberAt('e.properties', slot.value_keys);
  const numbers = (when: RawBuilder<unknown>) => sql`COALESCE(SUM(CASE WHEN ${when} THEN ${value} END), 0), COUNT(CASE WHEN ${when} THEN ${value} END)`;
  return sql`${count(inWindow)}, ${numbers(inWindow)}, ${count(sql`NOT (${inWindow})`)}, ${numbers(sql`NOT (${inWindow})`)}`;
}

/** The events of `slot` that the unit `x` counts in its window or lookback, among `e` of the unit. */
export function slotWindow(scope: RollupScope, slot: RollupSlot): RawBuilder<unknown> {
  const stop = scope.stoppedAt === null ? sql`` : sql` AND e.occurred_at < ${scope.stoppedAt}`;
  return sql`e.event_key = ${slot.event_key} AND e.occurred_at >= x.exposed_at - ${slot.lookback_ms} AND e.occurred_at < x.exposed_at + ${slot.window_ms}${stop}`;
}

/** The scope's bound on the events `e` (` AND ...`), or nothing without one. */
export function eventsThrough(scope: RollupScope): RawBuilder<unknown> {
  return scope.eventsThroughRowid === undefined ? sql`` : sql` AND e.rowid <= ${scope.eventsThroughRowid}`;
}

/** The events of `slot` that the unit `x` counts in its window or lookback. */
function slotEvents(scope: RollupScope, slot: RollupSlot): RawBuilder<unknown> {
  return sql`e.workspace_id = ${scope.workspaceId} AND e.unit_id = x.unit_id AND ${slotWindow(scope, slot)}${eventsThrough(scope)}`;
}

/**
 * Writes the slot's rows of the refreshed units that `units` selects (a condition on `x`, or
 * all of them), from all their events. The units must have no row of the slot yet.
 */
export async function buildSlot(executor: Executor, seam: DialectSeam, scope: RollupScope, slot: RollupSlot, units: RawBuilder<unknown> | null): Promise<void> {
  const only = units === null ? sql`` : sql` AND ${units}`;
  await sql`INSERT INTO analysis_rollup_values (${COLUMNS})
    SELECT x.experiment_id, x.unit_id, ${slot.metric_id}, ${slotAggregates(seam, slot)}
    FROM analysis_rollup_units AS x JOIN events AS e ON ${slotEvents(scope, slot)}
    WHERE x.experiment_id = ${scope.experimentId}${only}
    GROUP BY x.experiment_id, x.unit_id`.execute(executor);
}

/** The events the slot's rows of the selected units were built from (each counted event is in exactly one of cnt and pre_cnt). */
export async function eventsInSlot(executor: Executor, scope: RollupScope, slotId: string, units: RawBuilder<unknown> | null): Promise<number> {
  const only = units === null ? sql`` : sql` AND ${units}`;
  const result = await sql<{ events: unknown }>`SELECT COALESCE(SUM(x.cnt + x.pre_cnt), 0) AS events FROM analysis_rollup_values AS x
    WHERE x.experiment_id = ${scope.experimentId} AND x.metric_id = ${slotId}${only}`.execute(executor);
  return Number(result.rows[0]?.events ?? 0);
}

/** Replaces the refreshed units that `changed` (a query of unit ids) names by their live exposures now; their rows of every slot go. */
export async function replaceUnits(executor: Executor, experimentId: string, changed: RawBuilder<unknown> | null): Promise<number> {
  const only = changed === null ? sql`` : sql` AND unit_id IN (${changed})`;
  await sql`DELETE FROM analysis_rollup_values WHERE experiment_id = ${experimentId}${only}`.execute(executor);
  await sql`DELETE FROM analysis_rollup_units WHERE experiment_id = ${experimentId}${only}`.execute(executor);
  const inserted = await sql`INSERT INTO analysis_rollup_units (experiment_id, unit_id, id, variant_key, exposed_at, source_key_id, dimension_values)
    SELECT x.experiment_id, x.unit_id, x.id, x.variant_key, x.exposed_at, x.source_key_id, a.dimension_values FROM exposures AS x
    LEFT JOIN assignments AS a ON a.experiment_id = x.experiment_id AND a.unit_id = x.unit_id
    WHERE x.experiment_id = ${experimentId} AND x.superseded_at IS NULL${changed === null ? sql`` : sql` AND x.unit_id IN (${changed})`}`.execute(executor);
  return Number(inserted.numAffectedRows ?? 0);
}

/** Drops the rows of these slots. */
export async function dropSlots(executor: Executor, experimentId: string, slotIds: readonly string[]): Promise<void> {
  if (slotIds.length === 0) return;
  await sql`DELETE FROM analysis_rollup_values WHERE experiment_id = ${experimentId} AND metric_id IN (${sql.join([...slotIds])})`.execute(executor);
}

/** Drops all of the experiment's rollups and its state: the next refresh builds them from scratch. */
export async function dropRollups(executor: Executor, experimentId: string): Promise<void> {
  await sql`DELETE FROM analysis_rollup_values WHERE experiment_id = ${experimentId}`.execute(executor);
  await sql`DELETE FROM analysis_rollup_units WHERE experiment_id = ${experimentId}`.execute(executor);
  await sql`DELETE FROM analysis_rollup_totals WHERE experiment_id = ${experimentId}`.execute(executor);
  await sql`DELETE FROM analysis_rollup_state WHERE experiment_id = ${experimentId}`.execute(executor);
}

/**
 * The new events of a refresh, read once (docs/analysis.md "Incremental analysis"). One statement
 * reads the events committed since the watermark of every slot's key, finds each one's refreshed
 * unit once, and sums them per unit for every slot at once into a scratch table of the
 * transaction (one row per unit, six columns per slot); the slots' rows then gain those sums, the
 * maintained totals list the units from it, and events_read counts from it.
 *
 * Reading the new events once per slot (and again to count them and to list the units) looked
 * each one's unit up four to six times: at 1M units and +50,000 events that was most of the
 * refresh's SQL on SQLite (docs/analysis.md "Benchmark").
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import type { DialectSeam } from '../../../../db/dialect.js';
import { analysisSettingsOf } from '../dialect-settings.js';
import { eventsThrough, slotWindow, type RollupScope } from './slot-sql.js';
import type { RollupSlot } from '../../store/contract.js';

/**
 * The scratch tables (SQLite's connection-private temp schema; PostgreSQL's, dropped at commit):
 * the new events of unchanged units, and all the events of the units built again.
 */
type StagedTable = 'analysis_rollup_fresh' | 'analysis_rollup_built';

/** Events summed per unit for these slots, in a scratch table. */
export interface Staged {
  slots: readonly RollupSlot[];
  table: StagedTable;
}

function createStaged(seam: DialectSeam, table: StagedTable): RawBuilder<unknown> {
  return analysisSettingsOf(seam).createScratch(table);
}

/**
 * The new events (`fresh`: a condition on `e` naming the workspace and keys) each with its
 * refreshed unit `x` (a WITH clause, then a FROM and the start of a WHERE clause). Left to
 * themselves, the planners read every unit of the experiment instead: SQLite (kept from it by
 * CROSS JOIN, which fixes the order: each event's unit by primary key, about 0.3 µs an event),
 * and PostgreSQL, which hashes all of them (a sequential scan of analysis_rollup_units, about 1 s
 * at 1M units) because it costs a few thousand index lookups above one scan. There the distinct
 * units of the new events are read in one scan of the primary key (`= ANY` of their array) and
 * hashed, with nested loops off (aroundStaging): looking each new event's unit up by primary key
 * cost five times the buffer reads at +1% (4.6 new events per unit), and joined plainly to a
 * list estimated at one row the planner chose a nested loop (52 s instead of 1 s for 17,000 new
 * events of 20,000 units).
 */
function freshWithUnits(seam: DialectSeam, experimentId: string, fresh: RawBuilder<unknown>): { with: RawBuilder<unknown>; from: RawBuilder<unknown> } {
  const events = sql`fresh AS MATERIALIZED (SELECT e.unit_id AS unit_id, e.event_key AS event_key, e.occurred_at AS occurred_at, e.properties AS properties
    FROM events AS e WHERE ${fresh})`;
  if (analysisSettingsOf(seam).crossJoinsUnits) {
    return {
      with: sql`WITH ${events}`,
      from: sql`fresh AS e CROSS JOIN analysis_rollup_units AS x WHERE x.experiment_id = ${experimentId} AND x.unit_id = e.unit_id`,
    };
  }
  const units = sql`units AS MATERIALIZED (SELECT w.unit_id AS unit_id, w.exposed_at AS exposed_at FROM analysis_rollup_units AS w
    WHERE w.experiment_id = ${experimentId} AND w.unit_id = ANY (ARRAY(SELECT DISTINCT f.unit_id FROM fresh AS f)))`;
  return { with: sql`WITH ${events}, ${units}`, from: sql`fresh AS e JOIN units AS x ON x.unit_id = e.unit_id WHERE 1 = 1` };
}

const column = (prefix: string, index: number) => sql.ref(`${prefix}${index}`);

/** One slot's six sums over the unit's new events `e` that its window or lookback counts. */
function stagedSums(seam: DialectSeam, scope: RollupScope, slot: RollupSlot, index: number): RawBuilder<unknown> {
  const counted = slotWindow(scope, slot);
  const window = sql`${counted} AND e.occurred_at >= x.exposed_at`;
  const lookback = sql`${counted} AND e.occurred_at < x.exposed_at`;
  const count = (when: RawBuilder<unknown>, name: string) => sql`SUM(CASE WHEN ${when} THEN 1 ELSE 0 END) AS ${column(name, index)}`;
  if (slot.value_keys === null) {
    const none = (name: string) => sql`0 AS ${column(name, index)}`;
    return sql`${count(window, 'c')}, ${none('s')}, ${none('v')}, ${count(lookback, 'pc')}, ${none('ps')}, ${none('pv')}`;
  }
  const value = seam.jsonNumberAt('e.properties', slot.value_keys);
  const numbers = (when: RawBuilder<unknown>, sum: string, counts: string) =>
    sql`COALESCE(SUM(CASE WHEN ${when} THEN ${value} END), 0) AS ${column(sum, index)}, COUNT(CASE WHEN ${when} THEN ${value} END) AS ${column(counts, index)}`;
  return sql`${count(window, 'c')}, ${numbers(window, 's', 'v')}, ${count(lookback, 'pc')}, ${numbers(lookback, 'ps', 'pv')}`;
}

/**
 * Stages the new events (`fresh`: a condition on `e` naming the workspace and every slot's key)
 * of the refreshed units that `units` selects (a condition on `x`). Units whose new events none of
 * the slots counts still get a row: they have new events, so they are refreshed.
 */
export async function stageNewEvents(
  executor: Executor,
  seam: DialectSeam,
  scope: RollupScope,
  slots: readonly RollupSlot[],
  fresh: RawBuilder<unknown>,
  units: RawBuilder<unknown>,
): Promise<Staged> {
  const staged: Staged = { slots, table: 'analysis_rollup_fresh' };
  await dropStaged(executor, seam, staged);
  const sums = slots.map((slot, index) => sql`, ${stagedSums(seam, scope, slot, index)}`);
  const joined = freshWithUnits(seam, scope.experimentId, fresh);
  const around = analysisSettingsOf(seam).aroundStaging;
  for (const statement of around.before) await statement.execute(executor);
  await sql`${createStaged(seam, staged.table)} AS ${joined.with}
    SELECT x.unit_id AS unit_id, COUNT(*) AS n${sql.join(sums, sql``)}
    FROM ${joined.from} AND ${units}
    GROUP BY x.unit_id`.execute(executor);
  for (const statement of around.after) await statement.execute(executor);
  // The touched units' read looks each unit up here (sql/rollup/touched.ts); without an index SQLite
  // scanned the whole table for every unit (15 s instead of 0.5 s at 1M units, +1%).
  if (analysisSettingsOf(seam).indexesStagedUnits)
    await sql`CREATE UNIQUE INDEX temp.analysis_rollup_fresh_unit ON analysis_rollup_fresh (unit_id)`.execute(executor);
  return staged;
}

/**
 * Stages all the events (up to the scope's bound) of the refreshed units that `units` selects (a
 * condition on `x`), each unit's events of every slot's key read once (one slot at a time read a
 * key's events once per slot of that key). Their rows must not exist yet.
 */
export async function stageUnits(
  executor: Executor,
  seam: DialectSeam,
  scope: RollupScope,
  slots: readonly RollupSlot[],
  units: RawBuilder<unknown>,
): Promise<Staged> {
  const staged: Staged = { slots, table: 'analysis_rollup_built' };
  await dropStaged(executor, seam, staged);
  const keys = [...new Set(slots.map((slot) => slot.event_key))];
  const sums = slots.map((slot, index) => sql`, ${stagedSums(seam, scope, slot, index)}`);
  await sql`${createStaged(seam, staged.table)} AS
    SELECT x.unit_id AS unit_id, COUNT(*) AS n${sql.join(sums, sql``)}
    FROM analysis_rollup_units AS x JOIN events AS e ON e.workspace_id = ${scope.workspaceId} AND e.event_key IN (${sql.join(keys)}) AND e.unit_id = x.unit_id${eventsThrough(scope)}
    WHERE x.experiment_id = ${scope.experimentId} AND ${units}
    GROUP BY x.unit_id`.execute(executor);
  return staged;
}

/** The events the staged rows count, once per slot that counts them (as the slots' rows say: cnt + pre_cnt). */
export async function stagedSlotEvents(executor: Executor, staged: Staged): Promise<number> {
  if (staged.slots.length === 0) return 0;
  const terms = staged.slots.map((_, index) => sql`f.${column('c', index)} + f.${column('pc', index)}`);
  const result = await sql<{ events: unknown }>`SELECT COALESCE(SUM(${sql.join(terms, sql` + `)}), 0) AS events FROM ${sql.raw(staged.table)} AS f`.execute(
    executor,
  );
  return Number(result.rows[0]?.events ?? 0);
}

/** The staged units (a query of unit ids). */
export function stagedUnits(staged: Staged): RawBuilder<unknown> {
  return sql`SELECT f.unit_id FROM ${sql.raw(staged.table)} AS f`;
}

/** How many new events the staged units have, and how many units. */
export async function stagedCounts(executor: Executor, staged: Staged): Promise<{ events: number; units: number }> {
  const result = await sql<{
    events: unknown;
    units: unknown;
  }>`SELECT COALESCE(SUM(f.n), 0) AS events, COUNT(*) AS units FROM ${sql.raw(staged.table)} AS f`.execute(executor);
  const row = result.rows[0];
  return { events: Number(row?.events ?? 0), units: Number(row?.units ?? 0) };
}

const COLUMNS = sql`experiment_id, unit_id, metric_id, cnt, vsum, vcnt, pre_cnt, pre_vsum, pre_vcnt`;

/** Every staged slot's rows gain the staged sums (a row is created for a unit without one); the scratch table then goes. */
export async function addStaged(executor: Executor, seam: DialectSeam, experimentId: string, staged: Staged): Promise<void> {
  const added = (name: string) => sql`${sql.raw(name)} = analysis_rollup_values.${sql.raw(name)} + excluded.${sql.raw(name)}`;
  const updates = sql.join(['cnt', 'vsum', 'vcnt', 'pre_cnt', 'pre_vsum', 'pre_vcnt'].map(added));
  for (const [index, slot] of staged.slots.entries()) {
    const values = sql.join(['c', 's', 'v', 'pc', 'ps', 'pv'].map((name) => sql`f.${column(name, index)}`));
    // The WHERE clause is also what SQLite needs to read ON CONFLICT as the upsert's, not a join's.
    await sql`INSERT INTO analysis_rollup_values (${COLUMNS})
      SELECT ${experimentId}, f.unit_id, ${slot.metric_id}, ${values} FROM ${sql.raw(staged.table)} AS f
      WHERE f.${column('c', index)} + f.${column('pc', index)} > 0
      ON CONFLICT (experiment_id, unit_id, metric_id) DO UPDATE SET ${updates}`.execute(executor);
  }
  await dropStaged(executor, seam, staged);
}

/** Drops the scratch table (SQLite keeps a temp table on the connection after the commit). */
export async function dropStaged(executor: Executor, seam: DialectSeam, staged: Staged): Promise<void> {
  await sql`DROP TABLE IF EXISTS ${analysisSettingsOf(seam).scratchName(staged.table)}`.execute(executor);
}

/**
 * Where a computation's per-unit values come from (docs/analysis.md "Incremental analysis"):
 * - `events`: the full computation. The units are the live exposures, each unit's value an
 *   aggregate over its raw events joined through `events_metric_idx`.
 * - `rollups`: the incremental one. The units are the live exposures as of the last refresh
 *   (analysis_rollup_units), each unit's value rebuilt from its rows of analysis_rollup_values
 *   (counted events, sum and count of numbers, the same over the CUPED lookback); no raw event is
 *   read.
 * Everything above the per-unit values (per-variant sums, percentile caps, CUPED and ratio sums,
 * breakdowns) is the same SQL for both, so the two agree whenever the per-unit values do.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { analysisSettingsOf } from './dialect-settings.js';
import type { MetricSpec, UnitSource } from '../store/contract.js';

/** The units table, as `x`. */
export function unitsTable(source: UnitSource): RawBuilder<unknown> {
  return source === 'rollups' ? sql`analysis_rollup_units AS x` : sql`exposures AS x`;
}

/** The experiment's live units among `x`. */
export function liveUnitsOf(source: UnitSource, experimentId: string): RawBuilder<unknown> {
  return source === 'rollups' ? sql`x.experiment_id = ${experimentId}` : sql`x.experiment_id = ${experimentId} AND x.superseded_at IS NULL`;
}

/** What a per-unit query groups by: the dialect's choice over exposures, the primary key over rollup units. */
export function unitGroupOf(seam: DialectSeam, source: UnitSource): RawBuilder<unknown> {
  return source === 'rollups' ? sql`x.experiment_id, x.unit_id` : analysisSettingsOf(seam).unitGroup;
}

/**
 * The rollup rows of the metrics' slots, joined to each unit `x` as `r`. With `unitRange` (SQLite
 * only), the metric is kept from the index (unary +), so a unit's rows are one range of the
 * primary key rather than one seek per metric (about 13% of a lookup of a few thousand units).
 */
export function rollupJoin(metrics: readonly MetricSpec[], unitRange = false): RawBuilder<unknown> {
  const slots = [...new Set(metrics.flatMap((metric) => [metric, ...(metric.denominator ? [metric.denominator] : [])]).map(slotOf))];
  if (slots.length === 0) return sql``;
  const metric = unitRange ? sql`+r.metric_id` : sql`r.metric_id`;
  return sql` LEFT JOIN analysis_rollup_values AS r ON r.experiment_id = x.experiment_id AND r.unit_id = x.unit_id AND ${metric} IN (${sql.join(slots)})`;
}

function slotOf(metric: MetricSpec): string {
  if (!metric.metric_id) throw new Error('a metric analysed from rollups needs its metric_id');
  return metric.metric_id;
}

/**
 * The unit's value of one metric from its rollup row (one row per unit and metric, so MAX picks
 * it), as the full computation's unitValue gives it from raw events: binary 0/1, count the
 * counted events, sum the sum of the numbers and mean their average (NULL without a number).
 */
export function rollupValue(metric: MetricSpec, period: 'window' | 'lookback'): RawBuilder<unknown> {
  const slot = slotOf(metric);
  const [cnt, vsum, vcnt] = period === 'window' ? ['r.cnt', 'r.vsum', 'r.vcnt'] : ['r.pre_cnt', 'r.pre_vsum', 'r.pre_vcnt'];
  const counted = sql`MAX(CASE WHEN r.metric_id = ${slot} THEN ${sql.ref(cnt)} END)`;
  if (metric.kind === 'binary') return sql`(CASE WHEN ${counted} > 0 THEN 1 ELSE 0 END)`;
  if (metric.aggregation === 'count' || metric.value_keys === null) return sql`COALESCE(${counted}, 0)`;
  const numbered = sql`r.metric_id = ${slot} AND ${sql.ref(vcnt)} > 0`;
  if (metric.aggregation === 'sum') return sql`MAX(CASE WHEN ${numbered} THEN ${sql.ref(vsum)} END)`;
  return sql`MAX(CASE WHEN ${numbered} THEN ${sql.ref(vsum)} / ${sql.ref(vcnt)} END)`;
}

/**
 * Staged sums a unit's rows gain (sql/rollup/fresh.ts): the column of a slot's staged sum (`c`, `s`,
 * `v` in the window, `pc`, `ps`, `pv` in the lookback), aggregated over the unit's one staged row.
 */
export type AddedColumn = (metricId: string, name: 'c' | 's' | 'v' | 'pc' | 'ps' | 'pv') => RawBuilder<unknown>;

/**
 * The unit's value of one metric once its row has gained the staged sums `added`, as rollupValue
 * gives it from the row the upsert writes (addStaged: each column plus the staged one, or the
 * staged ones for a unit without a row; a unit without a row has the value of a row of zeros).
 * The same additions in the same types, so the values are the same numbers.
 */
function rollupValueAfter(metric: MetricSpec, period: 'window' | 'lookback', added: AddedColumn): RawBuilder<unknown> {
  const slot = slotOf(metric);
  const [cnt, vsum, vcnt] = period === 'window' ? ['r.cnt', 'r.vsum', 'r.vcnt'] : ['r.pre_cnt', 'r.pre_vsum', 'r.pre_vcnt'];
  const [c, s, v] = period === 'window' ? (['c', 's', 'v'] as const) : (['pc', 'ps', 'pv'] as const);
  const after = (column: string, name: typeof c | typeof s | typeof v) =>
    sql`(COALESCE(MAX(CASE WHEN r.metric_id = ${slot} THEN ${sql.ref(column)} END), 0) + ${added(slot, name)})`;
  const counted = after(cnt, c);
  if (metric.kind === 'binary') return sql`(CASE WHEN ${counted} > 0 THEN 1 ELSE 0 END)`;
  if (metric.aggregation === 'count' || metric.value_keys === null) return counted;
  // A double, as the stored column is (SQLite would otherwise add and divide integers as integers).
  const sum = sql`CAST(${after(vsum, s)} AS double precision)`;
  const numbered = sql`${after(vcnt, v)} > 0`;
  if (metric.aggregation === 'sum') return sql`(CASE WHEN ${numbered} THEN ${sum} END)`;
  return sql`(CASE WHEN ${numbered} THEN ${sum} / ${after(vcnt, v)} END)`;
}

/**
 * The per-unit columns m{i}, d{i} (a ratio's denominator) and p{i} (a CUPED covariate) from rollups;
 * with `added`, named with `prefix`, as they are once the rows have gained the staged sums.
 */
export function rollupValueColumns(metrics: readonly MetricSpec[], added?: AddedColumn, prefix = ''): RawBuilder<unknown>[] {
  const value = (metric: MetricSpec, period: 'window' | 'lookback') => (added ? rollupValueAfter(metric, period, added) : rollupValue(metric, period));
  return metrics.flatMap((metric, index) => [
    sql`, ${value(metric, 'window')} AS ${sql.ref(`${prefix}m${index}`)}`,
    ...(metric.denominator ? [sql`, ${value(metric.denominator, 'window')} AS ${sql.ref(`${prefix}d${index}`)}`] : []),
    ...(metric.lookback_ms ? [sql`, ${value(metric, 'lookback')} AS ${sql.ref(`${prefix}p${index}`)}`] : []),
  ]);
}

/** The unit_id `offset` places after `after` among the experiment's live units (chunk bounds), or null past the end. */
export async function unitIdAfter(executor: Executor, source: UnitSource, experimentId: string, after: string | null, offset: number): Promise<string | null> {
  const lower = after === null ? sql`` : sql` AND x.unit_id > ${after}`;
  const result = await sql<{ unit_id: string }>`SELECT x.unit_id AS unit_id FROM ${unitsTable(source)}
    WHERE ${liveUnitsOf(source, experimentId)}${lower} ORDER BY x.unit_id LIMIT 1 OFFSET ${offset}`.execute(executor);
  return result.rows[0]?.unit_id ?? null;
}

/**
 * The chunks' upper bounds (unit_id, inclusive) of `chunkUnits` live units each, the last one
 * null (open-ended): the unit at every chunkUnits-th position, in one statement on the read pool.
 * Paging with OFFSET on the caller's connection held a SQLite API thread for each chunk's index
 * scan (70–90 ms per 10,000 units on a busy machine; docs/benchmarks.md "Latency under sustained load").
 */
export async function unitChunkBounds(
  executor: Executor,
  reads: ReadPool,
  source: UnitSource,
  experimentId: string,
  chunkUnits: number,
): Promise<Array<string | null>> {
  const query = sql<{ unit_id: string }>`SELECT unit_id FROM (SELECT x.unit_id AS unit_id, ROW_NUMBER() OVER (ORDER BY x.unit_id) AS n
    FROM ${unitsTable(source)} WHERE ${liveUnitsOf(source, experimentId)}) AS numbered WHERE n % ${sql.lit(chunkUnits)} = 0 ORDER BY unit_id`;
  const [rows = []] = await reads.all([query.compile(executor)]);
  return [...rows.map((row) => String(row.unit_id)), null];
}

export async function countLiveUnits(executor: Executor, source: UnitSource, experimentId: string): Promise<number> {
  const result = await sql<{ units: unknown }>`SELECT COUNT(*) AS units FROM ${unitsTable(source)} WHERE ${liveUnitsOf(source, experimentId)}`.execute(
    executor,
  );
  return Number(result.rows[0]?.units ?? 0);
}

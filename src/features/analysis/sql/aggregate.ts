/**
 * The SQL of the analysis (docs/analysis.md "How a snapshot is computed"): per-variant sufficient statistics of each
 * metric, computed by the database over indexed tables so that this process's memory does not
 * grow with the number of units or events.
 *
 * - A unit counts once, in the variant of its live (not superseded) exposure: the partial unique
 *   index `exposures_live_unique` guarantees at most one per unit and experiment, and it is the
 *   first one that is not superseded.
 * - A unit's events count for a metric when the event key matches and
 *   exposed_at <= occurred_at < exposed_at + unit_dedup_window (and before the stop, if stopped).
 * - Each unit's events are joined through `events_metric_idx` (workspace_id, event_key, unit_id,
 *   occurred_at): one index range per event key, however many metrics share it.
 * - On SQLite, units are read in chunks (dialect-settings.ts), keyset-paged on
 *   unit_id through the live-exposure index. Sums are additive, so chunks add up to what one
 *   statement gives, while no statement holds the event loop and the only connection for long.
 *   PostgreSQL gets one statement per experiment and runs it on the server.
 */
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { capped, type Column } from './columns.js';
import { covariateColumns, longestLookbackOf } from './cuped-totals.js';
import { countLiveUnits, liveUnitsOf, rollupJoin, rollupValueColumns, unitChunkBounds, unitGroupOf, unitsTable } from './unit-source.js';
import type { Aggregation, AggregationInput, MetricSpec, TopLists, TopValue, VariantTotals } from '../store/contract.js';
import { addVariantRow, toNumber } from '../store/fold.js';

type Row = Record<string, unknown>;

/**
 * Which joined events a per-unit value counts: the metric's window after the exposure, or the
 * CUPED lookback before it. When the join reaches back before the exposure (`reachesBack`), the
 * window also needs its lower bound, which the join otherwise gives.
 */
export type UnitPeriod = { kind: 'window'; reachesBack: boolean } | { kind: 'lookback'; longest: number };

function countedIn(metric: MetricSpec, period: UnitPeriod): RawBuilder<unknown> {
  if (period.kind === 'lookback') {
    // The join already starts at the longest lookback; a shorter one needs its own lower bound.
    const lookback = metric.lookback_ms ?? 0;
    const from = lookback < period.longest ? sql` AND e.occurred_at >= x.exposed_at - ${lookback}` : sql``;
    return sql`e.event_key = ${metric.event_key} AND e.occurred_at < x.exposed_at${from}`;
  }
  const from = period.reachesBack ? sql` AND e.occurred_at >= x.exposed_at` : sql``;
  return sql`e.event_key = ${metric.event_key}${from} AND e.occurred_at < x.exposed_at + ${metric.window_ms}`;
}

/**
 * The per-unit value of one metric, as an aggregate over the unit's joined events `e`. FILTER
 * (SQLite 3.30+, PostgreSQL 9.4+) skips the aggregate's step for the rows of other metrics and
 * periods instead of feeding it a 0 or NULL: every unit's row passes through every aggregate.
 * Aggregates of no rows are NULL (a binary metric's is made 0); the sums below treat NULL as 0.
 */
export function unitValue(seam: DialectSeam, metric: MetricSpec, period: UnitPeriod = { kind: 'window', reachesBack: false }): RawBuilder<number | null> {
  const counted = countedIn(metric, period);
  if (metric.kind === 'binary') return sql`COALESCE(MAX(1) FILTER (WHERE ${counted}), 0)`;
  if (metric.aggregation === 'count' || metric.value_keys === null) return sql`COUNT(*) FILTER (WHERE ${counted})`;
  const value = seam.jsonNumberAt('e.properties', metric.value_keys);
  // SUM and AVG of no numbers are NULL: the unit has no value (a sum then adds 0 below).
  return metric.aggregation === 'sum' ? sql`SUM(${value}) FILTER (WHERE ${counted})` : sql`AVG(${value}) FILTER (WHERE ${counted})`;
}

/** A ratio's outer aggregates: units, the sums of x, y, x^2, y^2 and x y, units with y != 0. */
function ratioColumns(metric: MetricSpec, denominator: MetricSpec, index: number): Column[] {
  const x = sql`COALESCE(${capped(sql.ref(`u.m${index}`), metric.cap)}, 0)`;
  const y = sql`COALESCE(${capped(sql.ref(`u.d${index}`), denominator.cap)}, 0)`;
  return [
    [`n${index}`, sql`COUNT(*)`],
    [`s${index}`, sql`SUM(${x})`],
    [`q${index}`, sql`SUM(${x} * ${x})`],
    [`c${index}`, sql`SUM(CASE WHEN ${y} <> 0 THEN 1 ELSE 0 END)`],
    [`sy${index}`, sql`SUM(${y})`],
    [`qy${index}`, sql`SUM(${y} * ${y})`],
    [`xy${index}`, sql`SUM(${x} * ${y})`],
  ];
}

/**
 * Outer aggregates of metric i over the units of a variant (column m{i} holds each unit's value,
 * capped here when the metric caps):
 * - n: every unit, except for mean metrics, where only units with a value have a mean;
 * - conversions: binary 0/1 summed; count: units with at least one event; sum and mean: units
 *   with at least one number.
 */
export function metricColumns(metric: MetricSpec, index: number): Column[] {
  if (metric.denominator) return ratioColumns(metric, metric.denominator, index);
  const m = capped(sql.ref(`u.m${index}`), metric.cap);
  const n = metric.aggregation === 'mean' && metric.kind !== 'binary' ? sql`COUNT(${m})` : sql`COUNT(*)`;
  let conversions: RawBuilder<unknown>;
  if (metric.kind === 'binary') conversions = sql`SUM(${m})`;
  else if (metric.aggregation === 'count') conversions = sql`SUM(CASE WHEN ${m} > 0 THEN 1 ELSE 0 END)`;
  else conversions = sql`COUNT(${m})`;
  const columns: Column[] = [
    [`n${index}`, n],
    [`s${index}`, sql`SUM(${m})`],
    [`q${index}`, sql`SUM(${m} * ${m})`],
    [`c${index}`, conversions],
  ];
  if (metric.percentile) columns.push([`z${index}`, sql`SUM(CASE WHEN ${m} <> 0 THEN 1 ELSE 0 END)`]);
  if (metric.lookback_ms) columns.push(...covariateColumns(metric, index));
  return columns;
}

/**
 * The events of a unit that any metric may count: one index range per event key, from the
 * exposure to the end of the widest window (each metric's CASE then applies its own window).
 */
export function eventJoin(input: Pick<AggregationInput, 'metrics' | 'workspaceId' | 'eventsBefore'>): RawBuilder<unknown> {
  const columns = unitColumnsOf(input.metrics);
  if (columns.length === 0) return sql``;
  const keys = [...new Set(columns.map((metric) => metric.event_key))];
  const widest = Math.max(...columns.map((metric) => metric.window_ms));
  const longestLookback = longestLookbackOf(input.metrics);
  const before = input.eventsBefore === null ? sql`` : sql` AND e.occurred_at < ${input.eventsBefore}`;
  const from = longestLookback > 0 ? sql`x.exposed_at - ${longestLookback}` : sql`x.exposed_at`;
  return sql` LEFT JOIN events AS e ON e.workspace_id = ${input.workspaceId} AND e.event_key IN (${sql.join(keys)})
        AND e.unit_id = x.unit_id AND e.occurred_at >= ${from} AND e.occurred_at < x.exposed_at + ${widest}${before}`;
}

/** The join that gives each unit `x` what its values are computed from: its raw events, or its rollup rows. */
export function valueJoin(input: Pick<AggregationInput, 'metrics' | 'workspaceId' | 'eventsBefore' | 'source'>): RawBuilder<unknown> {
  return input.source === 'rollups' ? rollupJoin(input.metrics) : eventJoin(input);
}

/** The per-unit value columns (m{i}, d{i}, p{i}) from the input's source. */
export function valueColumns(seam: DialectSeam, input: Pick<AggregationInput, 'metrics' | 'source'>): RawBuilder<unknown>[] {
  return input.source === 'rollups' ? rollupValueColumns(input.metrics) : unitValueColumns(seam, input.metrics);
}

/** Every per-unit value the statement computes: each metric, and each ratio's denominator. */
function unitColumnsOf(metrics: readonly MetricSpec[]): MetricSpec[] {
  return metrics.flatMap((metric) => (metric.denominator ? [metric, metric.denominator] : [metric]));
}

/**
 * The per-unit value columns: m{i} for metric i, d{i} for a ratio's denominator, p{i} for a
 * CUPED covariate.
 */
export function unitValueColumns(seam: DialectSeam, metrics: readonly MetricSpec[]): RawBuilder<unknown>[] {
  const longest = longestLookbackOf(metrics);
  const window: UnitPeriod = { kind: 'window', reachesBack: longest > 0 };
  return metrics.flatMap((metric, index) => [
    sql`, ${unitValue(seam, metric, window)} AS ${sql.ref(`m${index}`)}`,
    ...(metric.denominator ? [sql`, ${unitValue(seam, metric.denominator, window)} AS ${sql.ref(`d${index}`)}`] : []),
    ...(metric.lookback_ms ? [sql`, ${unitValue(seam, metric, { kind: 'lookback', longest })} AS ${sql.ref(`p${index}`)}`] : []),
  ]);
}

/**
 * One row per live exposure of the experiment with column m0: the unit's value of `metric`
 * (uncapped). The percentile cap reads its order statistics from this.
 */
export function unitValuesQuery(
  seam: DialectSeam,
  input: Pick<AggregationInput, 'workspaceId' | 'experimentId' | 'eventsBefore' | 'source'>,
  metric: MetricSpec,
): RawBuilder<Row> {
  const source = input.source ?? 'events';
  const only = { ...input, metrics: [{ ...metric, denominator: undefined, lookback_ms: null }] };
  const value = source === 'rollups' ? rollupValueColumns(only.metrics)[0] : sql`, ${unitValue(seam, metric)} AS m0`;
  return sql<Row>`SELECT 0 AS unused${value}
      FROM ${unitsTable(source)}${valueJoin(only)}
      WHERE ${liveUnitsOf(source, input.experimentId)}
      GROUP BY ${unitGroupOf(seam, source)}`;
}

/** How many of its largest nonzero values each statement returns per pending percentile metric (index). */
export type TopLimits = ReadonlyMap<number, number>;

/**
 * One chunk: the inner query reduces each unit to its metric values (the live-exposure index
 * delivers units in unit_id order, so the per-unit GROUP BY streams), the outer one sums them
 * per variant. Only per-variant rows leave the database, and, for a metric whose percentile cap
 * is pending, the chunk's largest values (rows with part = 1: variant_key, top_metric,
 * top_value), read from the same materialised per-unit rows, so the cap costs no second pass.
 */
function chunkQuery(seam: DialectSeam, input: AggregationInput, bounds: { after: string | null; through: string | null }, tops: TopLimits): RawBuilder<Row> {
  const source = input.source ?? 'events';
  // From raw events, the joined rows are counted too (the snapshot's computation.events_read).
  const readsEvents = source === 'events' && unitColumnsOf(input.metrics).length > 0;
  const values = [...valueColumns(seam, input), ...(readsEvents ? [sql`, COUNT(e.event_key) AS ev`] : [])];
  const columns: Column[] = [
    ...input.metrics.flatMap((metric, index) => metricColumns(metric, index)),
    ...(readsEvents ? [['ev', sql`SUM(u.ev)`] as Column] : []),
  ];
  const selected = sql.join(
    columns.map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`),
    sql``,
  );
  const lower = bounds.after === null ? sql`` : sql` AND x.unit_id > ${bounds.after}`;
  const upper = bounds.through === null ? sql`` : sql` AND x.unit_id <= ${bounds.through}`;
  const perUnit = sql`SELECT x.variant_key AS variant_key${sql.join(values, sql``)}
      FROM ${unitsTable(source)}${valueJoin(input)}
      WHERE ${liveUnitsOf(source, input.experimentId)}${lower}${upper}
      GROUP BY ${unitGroupOf(seam, source)}`;
  if (tops.size === 0) return sql<Row>`SELECT u.variant_key AS variant_key, COUNT(*) AS units${selected} FROM (${perUnit}) AS u GROUP BY u.variant_key`;
  const nulls = sql.join(
    columns.map(() => sql`, NULL`),
    sql``,
  );
  const topParts = [...tops].map(([index, limit]) => {
    const m = sql.ref(`u.m${index}`);
    return sql` UNION ALL SELECT 1, t.variant_key, NULL${nulls}, ${sql.lit(index)}, t.v
      FROM (SELECT u.variant_key AS variant_key, ${m} AS v FROM u WHERE ${m} IS NOT NULL AND ${m} <> 0 ORDER BY ${m} DESC LIMIT ${sql.lit(limit)}) AS t`;
  });
  return sql<Row>`WITH u AS MATERIALIZED (${perUnit})
    SELECT 0 AS part, u.variant_key AS variant_key, COUNT(*) AS units${selected}, NULL AS top_metric, NULL AS top_value FROM u GROUP BY u.variant_key${sql.join(topParts, sql``)}`;
}

function addChunk(totals: Map<string, VariantTotals>, rows: readonly Row[], metricCount: number): void {
  for (const row of rows) addVariantRow(totals, row, metricCount);
}

/** The chunks' upper bounds (unit_id, inclusive), the last one null (open-ended). */
async function chunkBounds(executor: Executor, reads: ReadPool, input: AggregationInput): Promise<Array<string | null>> {
  if (input.chunkUnits === null) return [null];
  return unitChunkBounds(executor, reads, input.source ?? 'events', input.experimentId, input.chunkUnits);
}

function collectTops(tops: Map<number, TopLists>, rows: readonly Row[], limits: TopLimits): void {
  const seen = new Map<number, TopValue[]>([...limits.keys()].map((index) => [index, []]));
  for (const row of rows) {
    if (toNumber(row.part) !== 1) continue;
    seen.get(toNumber(row.top_metric))?.push({ variant_key: String(row.variant_key), value: toNumber(row.top_value) });
  }
  for (const [index, values] of seen) {
    const lists = tops.get(index) ?? { statements: [] };
    lists.statements.push({ values: values.sort((a, b) => b.value - a.value), truncated: values.length >= (limits.get(index) ?? 0) });
    tops.set(index, lists);
  }
}

/**
 * Per-variant units and metric totals of the experiment's live exposures, keyed by variant, and
 * the top values of the metrics whose percentile cap is pending. `topLimit(q, statementUnits)`
 * says how many values a statement over at most that many units returns.
 */
export async function aggregateByVariant(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  input: AggregationInput,
  topLimit: (quantile: number, statementUnits: number) => number = () => 0,
): Promise<Aggregation> {
  const bounds = await chunkBounds(executor, reads, input);
  const pending = input.metrics.some((metric) => metric.percentile);
  // One statement over the whole experiment (PostgreSQL) returns as many values as its units need.
  const statementUnits = input.chunkUnits ?? (pending ? await countLiveUnits(executor, input.source ?? 'events', input.experimentId) : 0);
  const limits: TopLimits = new Map(
    input.metrics.flatMap((metric, index) => (metric.percentile ? [[index, topLimit(metric.percentile, statementUnits)] as const] : [])),
  );
  const queries: CompiledQuery[] = bounds.map((through, index) =>
    chunkQuery(seam, input, { after: index === 0 ? null : (bounds[index - 1] ?? null), through }, limits).compile(executor),
  );
  const totals = new Map<string, VariantTotals>();
  const tops = new Map<number, TopLists>();
  let eventsRead = 0;
  for (const rows of await reads.all(queries)) {
    const sums = rows.filter((row) => toNumber(row.part) !== 1);
    addChunk(totals, sums, input.metrics.length);
    for (const row of sums) eventsRead += toNumber(row.ev);
    if (limits.size > 0) collectTops(tops, rows, limits);
  }
  return { totals, tops, eventsRead };
}

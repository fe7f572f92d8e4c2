/**
 * The analysis's per-unit values in ClickHouse (docs/analysis.md "ClickHouse"): the same
 * definitions as sql/aggregate.ts (a unit counts once, in the variant of its live exposure; its
 * events count for a metric inside exposed_at <= occurred_at < exposed_at + window, before the
 * stop; the CUPED covariate over the lookback), written for ClickHouse's engine:
 * - events are joined to the live units with the units as the hash table (the small side), on
 *   cityHash64(unit_id): a UInt64 key hashes and compares faster than the String. Every condition
 *   also asks e.unit_id = x.unit_id, so an event of another unit whose hash collides counts
 *   nowhere, and the rows are grouped per live unit by its row number in the units' subquery
 *   (unique, a UInt64), so two live units whose hashes collide stay two units;
 * - events are read without FINAL, only those of committed drains (drain_seq <= the committed
 *   number): no committed event is stored twice (clickhouse/events.ts);
 * - sums are exact: each term becomes Decimal256 with DECIMAL_SCALE digits after the point and
 *   the sum is integer arithmetic, so the order in which threads (or shards) add them up cannot
 *   change a bit of the result. A plain Float64 sum in parallel does (issue #34 saw two results in
 *   six runs). Terms are Float64 computed per unit (deterministic), within 1e-9 relative of SQL.
 */
import { rollupUnitValuesQuery } from './rollup-sql.js';
import type { MetricSpec } from '../store/contract.js';
import { DECIMAL_SCALE, jsonNumber, Params, type Period, type UnitColumn, type UnitScope } from './sql-parts.js';

/**
 * The exact sum of a Float64 expression (NULL terms add 0). `integral`: every term is a whole
 * number (counts, binary values, their squares and products): summed as Int128, exact and
 * converted to Float64 exactly. Otherwise the Decimal256 sum is returned as its decimal text,
 * which the reader parses to the nearest double (store/fold.ts toNumber): ClickHouse's own
 * conversion of a Decimal256 to Float64 rounds twice (50,000 converted units came back as
 * 50000.00000000001, and five units capped at 80 had a variance above 0).
 */
export function exactSum(expression: string, integral = false): string {
  if (integral) return `toFloat64(sum(toInt128(ifNull(${expression}, 0))))`;
  return `toString(sum(toDecimal256(ifNull(${expression}, 0), ${DECIMAL_SCALE})))`;
}

/** Whether every per-unit value of the metric is a whole number: binary and count values, capped at a whole number if at all. */
export function integralValues(metric: MetricSpec): boolean {
  const counted = metric.kind === 'binary' || metric.aggregation === 'count' || metric.value_keys === null;
  return counted && (metric.cap === null || Number.isInteger(metric.cap));
}

/** The experiment's live units (one per unit: the primary database's live-exposure index guarantees it). */
export function liveUnits(params: Params, experimentId: string, extra = ''): string {
  return `SELECT unit_id, variant_key, exposed_at${extra} FROM exposures FINAL WHERE experiment_id = ${params.string(experimentId)} AND superseded_at IS NULL`;
}

/**
 * The join key of events and live units. Only its speed depends on it being nearly unique: the
 * conditions and the grouping keep two units apart whatever it is, which the tests check by
 * setting a key that collides on purpose.
 */
export const unitJoinKey = { expression: 'cityHash64(unit_id)' };

/** The joined event is the unit's own (not one of another unit whose hash collides); false for a unit without events. */
const OWN = 'e.unit_id = x.unit_id';

function counted(params: Params, metric: MetricSpec, period: Period): string {
  const key = `${OWN} AND e.event_key = ${params.string(metric.event_key)}`;
  if (period === 'lookback') return `${key} AND e.occurred_at < x.exposed_at AND e.occurred_at >= x.exposed_at - ${params.int(metric.lookback_ms ?? 0)}`;
  return `${key} AND e.occurred_at >= x.exposed_at AND e.occurred_at < x.exposed_at + ${params.int(metric.window_ms)}`;
}

/**
 * A unit's value of one metric over its joined events `e` (grouped per unit); NULL when it has no
 * value. A unit without events (the RIGHT JOIN's NULL row) has 0 for count and binary metrics, no
 * value for sum and mean ones. The JSON number is read only where the event counts (`if` is
 * evaluated lazily): most joined events belong to other metrics.
 */
export function unitValue(params: Params, metric: MetricSpec, period: Period): string {
  const when = counted(params, metric, period);
  if (metric.kind === 'binary') return `toFloat64(countIf(${when}) > 0)`;
  if (metric.aggregation === 'count' || metric.value_keys === null) return `toFloat64(countIf(${when}))`;
  const value = `if(${when}, ${jsonNumber(params, metric.value_keys)}, NULL)`;
  const sum = `toFloat64(sum(toDecimal256(${value}, ${DECIMAL_SCALE})))`;
  const numbers = `count(${value})`;
  return metric.aggregation === 'sum' ? `if(${numbers} > 0, ${sum}, NULL)` : `if(${numbers} > 0, ${sum} / ${numbers}, NULL)`;
}

/** m{i} for metric i, d{i} for a ratio's denominator, p{i} for a CUPED covariate. */
export function unitColumns(metrics: readonly MetricSpec[]): UnitColumn[] {
  return metrics.flatMap((metric, index) => [
    { alias: `m${index}`, metric, period: 'window' as const },
    ...(metric.denominator ? [{ alias: `d${index}`, metric: metric.denominator, period: 'window' as const }] : []),
    ...(metric.lookback_ms ? [{ alias: `p${index}`, metric, period: 'lookback' as const }] : []),
  ]);
}

/** A column of the exposure carried into the per-unit rows (breakdowns: a dimension's raw value). */
export interface ExposureColumn {
  alias: string;
  expression: string;
}

/**
 * One row per live unit: variant_key, exposed_at, the value columns and `ev` (the events joined,
 * the snapshot's events_read), plus `extra` columns of the exposure (breakdowns).
 * One join: the experiment's events RIGHT JOIN its live units (the hash table is built on the
 * units, the small side; a unit without events comes out once with NULLs), grouped per unit. The
 * per-metric conditions hold each metric's window, so no event outside them counts.
 * `withEvents`: only the units with an event of the metrics' keys (an INNER JOIN, not RIGHT): the
 * caller accounts for the others, which saves grouping them when they are many.
 */
export function unitValuesQuery(
  params: Params,
  scope: UnitScope,
  metrics: readonly MetricSpec[],
  extra: readonly ExposureColumn[] = [],
  withEvents = false,
): string {
  const exposureColumns = extra.map((column) => `, ${column.expression} AS ${column.alias}`).join('');
  if (scope.source === 'rollups') return rollupUnitValuesQuery(params, scope, unitColumns(metrics), exposureColumns);
  const columns = unitColumns(metrics);
  const units = liveUnits(params, scope.experimentId, exposureColumns);
  if (columns.length === 0) return `SELECT x.*, toUInt64(0) AS ev FROM (${units}) AS x`;
  const specs = columns.map((column) => column.metric);
  const keys = [...new Set(specs.map((metric) => metric.event_key))];
  const widest = Math.max(...specs.map((metric) => metric.window_ms));
  const longest = metrics.reduce((most, metric) => Math.max(most, metric.lookback_ms ?? 0), 0);
  const stop = scope.eventsBefore === null ? '' : ` AND occurred_at < ${params.int(scope.eventsBefore)}`;
  const carried = ['variant_key', 'exposed_at', ...extra.map((column) => column.alias)].map((alias) => `any(x.${alias}) AS ${alias}`).join(', ');
  const values = columns.map((column) => `${unitValue(params, column.metric, column.period)} AS ${column.alias}`).join(', ');
  const read = `${OWN} AND e.occurred_at >= x.exposed_at - ${params.int(longest)} AND e.occurred_at < x.exposed_at + ${params.int(widest)}`;
  return `SELECT ${carried}, ${values}, countIf(${read}) AS ev
    FROM (SELECT ${unitJoinKey.expression} AS h, unit_id, event_key, occurred_at, properties FROM events
          WHERE workspace_id = ${params.string(scope.workspaceId)} AND event_key IN ${params.strings(keys)}
            AND drain_seq <= ${params.int(scope.drained)}${stop}) AS e
    ${withEvents ? 'INNER' : 'RIGHT'} JOIN (SELECT ${unitJoinKey.expression} AS h, rowNumberInAllBlocks() AS row, * FROM (${units})) AS x ON e.h = x.h
    GROUP BY x.row`;
}

/** The value capped from above; NULL stays NULL. */
function capped(params: Params, column: string, cap: number | null): string {
  return cap === null ? column : `if(${column} > ${params.float(cap)}, ${params.float(cap)}, ${column})`;
}

/**
 * The per-variant aggregates of metric i over the unit rows `u` (sql/aggregate.ts's metricColumns,
 * with exact sums): n, s, q, c; z for a pending percentile cap; px, pxx, pxy for CUPED; sy, qy, xy for a ratio.
 */
export function metricAggregates(params: Params, metric: MetricSpec, index: number): string[] {
  const m = capped(params, `u.m${index}`, metric.cap);
  const whole = integralValues(metric);
  if (metric.denominator) {
    const x = `ifNull(${m}, 0)`;
    const y = `ifNull(${capped(params, `u.d${index}`, metric.denominator.cap)}, 0)`;
    const wholeY = integralValues(metric.denominator);
    return [
      `count() AS n${index}`,
      `${exactSum(x, whole)} AS s${index}`,
      `${exactSum(`${x} * ${x}`, whole)} AS q${index}`,
      `countIf(${y} != 0) AS c${index}`,
      `${exactSum(y, wholeY)} AS sy${index}`,
      `${exactSum(`${y} * ${y}`, wholeY)} AS qy${index}`,
      `${exactSum(`${x} * ${y}`, whole && wholeY)} AS xy${index}`,
    ];
  }
  const mean = metric.aggregation === 'mean' && metric.kind !== 'binary';
  let conversions: string;
  if (metric.kind === 'binary') conversions = exactSum(m, whole);
  else if (metric.aggregation === 'count') conversions = `countIf(${m} > 0)`;
  else conversions = `count(${m})`;
  const columns = [
    `${mean ? `count(${m})` : 'count()'} AS n${index}`,
    `${exactSum(m, whole)} AS s${index}`,
    `${exactSum(`${m} * ${m}`, whole)} AS q${index}`,
    `${conversions} AS c${index}`,
  ];
  if (metric.percentile) columns.push(`countIf(${m} != 0) AS z${index}`);
  if (metric.lookback_ms) {
    const x = `ifNull(${capped(params, `u.p${index}`, metric.cap)}, 0)`;
    const y = `ifNull(${m}, 0)`;
    const only = (term: string) => (mean ? `if(isNotNull(${m}), ${term}, 0)` : term);
    columns.push(
      `${exactSum(only(x), whole)} AS px${index}`,
      `${exactSum(only(`${x} * ${x}`), whole)} AS pxx${index}`,
      `${exactSum(only(`${x} * ${y}`), whole)} AS pxy${index}`,
    );
  }
  return columns;
}

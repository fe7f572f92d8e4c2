/**
 * aggregateBreakdowns's counterpart in ClickHouse (docs/analysis.md "Breakdowns by dimension"):
 * the TOP_VALUES values of each breakdown with the most live units (from the mirrored exposures
 * alone, ties in byte order as the SQL pass ranks them), then one pass over the per-unit values in
 * which each unit is repeated once per breakdown (ARRAY JOIN) with its bucket: the value's index
 * among the top ones, NONE_BUCKET without a value, OTHER_BUCKET otherwise. The events are read once.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { liveUnits, metricAggregates, unitValuesQuery, type ExposureColumn } from './sql.js';
import { Params } from './sql-parts.js';
import { queryRows, type Drained } from './aggregate.js';
import { type BreakdownInput, type BreakdownKey, type BreakdownTotals, type MetricSpec, NONE_BUCKET, OTHER_BUCKET, TOP_VALUES } from '../store/contract.js';
import { addRow, toNumber } from '../store/fold.js';

/** The unit's raw value of a breakdown, from the mirrored exposure row (text or NULL). */
function rawValue(params: Params, key: BreakdownKey): string {
  if (key.kind === 'source') return 'source_key_id';
  const name = params.string(key.name);
  return `multiIf(JSONType(dimension_values, ${name}) = 'String', JSONExtractString(dimension_values, ${name}),
    JSONType(dimension_values, ${name}) IN ('Int64', 'UInt64', 'Double', 'Bool'), JSONExtractRaw(dimension_values, ${name}), NULL)`;
}

export function rawColumns(params: Params, breakdowns: readonly BreakdownKey[]): ExposureColumn[] {
  return breakdowns.map((key, index) => ({ alias: `r${index}`, expression: rawValue(params, key) }));
}

async function topValues(ch: ClickHouse, input: BreakdownInput): Promise<string[][]> {
  const params = new Params();
  const raw = rawColumns(params, input.breakdowns).map((column) => `, ${column.expression} AS ${column.alias}`);
  const units = `SELECT 0 AS unused${raw.join('')} FROM exposures FINAL
    WHERE experiment_id = ${params.string(input.experimentId)} AND superseded_at IS NULL`;
  const parts = input.breakdowns.map(
    (_, index) => `SELECT * FROM (SELECT ${index} AS breakdown, toString(r${index}) AS v, count() AS units FROM (${units})
      WHERE r${index} IS NOT NULL GROUP BY v ORDER BY units DESC, v LIMIT ${TOP_VALUES})`,
  );
  const rows = await queryRows(ch, parts.join(' UNION ALL '), params);
  const tops: string[][] = input.breakdowns.map(() => []);
  const ordered = [...rows].sort(
    (a, b) => toNumber(a.breakdown) - toNumber(b.breakdown) || toNumber(b.units) - toNumber(a.units) || (String(a.v) < String(b.v) ? -1 : 1),
  );
  for (const row of ordered) tops[toNumber(row.breakdown)]?.push(String(row.v));
  return tops;
}

function bucketOf(params: Params, index: number, values: readonly string[]): string {
  const raw = `u.r${index}`;
  const known = values.map((value, rank) => `${raw} = ${params.string(value)}, ${rank}`);
  return `multiIf(isNull(${raw}), ${NONE_BUCKET}, ${[...known, String(OTHER_BUCKET)].join(', ')})`;
}

/**
 * Whether a unit without events adds nothing but itself (units, and n where n counts units) to a
 * slice: its value is 0 (count, binary) or none (sum, mean), and a cap below 0 would change a 0.
 */
function emptyUnitsAddNothing(metric: MetricSpec): boolean {
  return (metric.cap === null || metric.cap >= 0) && (metric.denominator === undefined || metric.denominator.cap === null || metric.denominator.cap >= 0);
}

/** n counts units (not values): ratios, and every metric but a mean of values. */
function nCountsUnits(metric: MetricSpec): boolean {
  return metric.denominator !== undefined || metric.kind === 'binary' || metric.aggregation !== 'mean';
}

const slotKey = (row: Record<string, unknown>) => `${toNumber(row.breakdown)} ${toNumber(row.bucket)} ${String(row.variant_key)}`;

/**
 * The slices' totals. Most units have no event of the primary metric, so the pass joins only the
 * units with events (INNER JOIN) and counts every live unit per slice from the exposures alone;
 * the difference, the units without events, adds units (and n where n counts units) and nothing else.
 */
export async function breakdownsInClickHouse(ch: ClickHouse, input: BreakdownInput & Drained): Promise<BreakdownTotals[]> {
  if (input.breakdowns.length === 0) return [];
  const tops = await topValues(ch, input);
  const params = new Params();
  const metrics = input.primary ? [input.primary] : [];
  const split = input.primary !== null && emptyUnitsAddNothing(input.primary);
  const pairs = input.breakdowns.map((_, index) => `(${index}, ${bucketOf(params, index, tops[index] ?? [])})`).join(', ');
  const columns = metrics.flatMap((metric, index) => metricAggregates(params, metric, index));
  const raw = rawColumns(params, input.breakdowns);
  const units = unitValuesQuery(params, input, metrics, raw, split);
  const sliced = (from: string, selected: string) =>
    `SELECT slot.1 AS breakdown, slot.2 AS bucket, u.variant_key AS variant_key, count() AS units${selected} FROM (${from}) AS u ARRAY JOIN [${pairs}] AS slot GROUP BY breakdown, bucket, variant_key`;
  const result: BreakdownTotals[] = input.breakdowns.map((key, index) => ({ key, values: tops[index] ?? [], buckets: new Map() }));
  const rows = await queryRows(ch, sliced(units, columns.map((column) => `, ${column}`).join('')), params);
  for (const row of rows) addRow(result[toNumber(row.breakdown)]?.buckets, toNumber(row.bucket), row, metrics.length);
  if (!split || !input.primary) return result;
  const withEvents = new Map(rows.map((row) => [slotKey(row), toNumber(row.units)]));
  const everyUnit = liveUnits(params, input.experimentId, raw.map((column) => `, ${column.expression} AS ${column.alias}`).join(''));
  const countsUnits = nCountsUnits(input.primary);
  for (const row of await queryRows(ch, sliced(everyUnit, ''), params)) {
    const without = toNumber(row.units) - (withEvents.get(slotKey(row)) ?? 0);
    if (without > 0)
      addRow(
        result[toNumber(row.breakdown)]?.buckets,
        toNumber(row.bucket),
        { variant_key: row.variant_key, units: without, n0: countsUnits ? without : 0 },
        1,
      );
  }
  return result;
}

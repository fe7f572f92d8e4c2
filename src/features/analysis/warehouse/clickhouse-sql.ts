/**
 * The statement a ClickHouse source runs for one metric: the same per-unit rules and per-variant
 * sums as postgres-sql.ts. The exposures arrive as three array parameters zipped into rows. The
 * fact rows are joined on the unit alone and the window is applied by the conditional aggregates
 * (a join condition with inequalities would need a setting, and readonly=1 changes none).
 */
import type { WarehouseMetricSpec } from './spec.js';

export function quoteClickHouseIdentifier(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

/** The unit's value over its counted rows (NULL when a sum or mean has no number). */
function unitValue(metric: WarehouseMetricSpec, counted: string): string {
  if (metric.kind === 'binary') return `if(countIf(${counted}) > 0, 1, 0)`;
  if (metric.aggregation === 'count' || metric.fact.column === null) return `countIf(${counted})`;
  const withNumber = `${counted} AND e.v IS NOT NULL`;
  return `if(countIf(${withNumber}) > 0, ${metric.aggregation === 'sum' ? 'sumIf' : 'avgIf'}(e.v, ${withNumber}), NULL)`;
}

function variantColumns(metric: WarehouseMetricSpec): string {
  const m = metric.cap === null ? 'u.m' : 'if(u.m > {cap:Float64}, {cap:Float64}, u.m)';
  const n = metric.aggregation === 'mean' && metric.kind !== 'binary' ? `count(${m})` : 'count()';
  let conversions: string;
  if (metric.kind === 'binary') conversions = `sum(${m})`;
  else if (metric.aggregation === 'count') conversions = `countIf(${m} > 0)`;
  else conversions = `count(${m})`;
  return `${n} AS n0, sum(${m}) AS s0, sum(${m} * ${m}) AS q0, ${conversions} AS c0`;
}

/** Named parameters: units, variants, exposed (arrays), window, and cap and stop where there are. */
export function clickhouseMetricStatement(metric: WarehouseMetricSpec, eventsBefore: number | null): { text: string; params: Record<string, unknown> } {
  const fact = metric.fact;
  const value = fact.column === null ? 'CAST(NULL AS Nullable(Float64))' : `CAST(f.${quoteClickHouseIdentifier(fact.column)} AS Nullable(Float64))`;
  const where = fact.filter === null ? '' : `\n    WHERE (${fact.filter}\n    )`;
  const stop = eventsBefore === null ? '' : ' AND e.at < {stop:Int64}';
  // Unmatched units have no row (NULL or 0 in e.at, as join_use_nulls says): outside every window either way.
  const counted = `(e.at >= x.exposed_at AND e.at < x.exposed_at + {window:Int64}${stop})`;
  const text = `WITH x AS (
    SELECT t.1 AS unit_id, t.2 AS variant_key, t.3 AS exposed_at
    FROM (SELECT arrayJoin(arrayZip({units:Array(String)}, {variants:Array(String)}, {exposed:Array(Int64)})) AS t)
  ), e AS (
    SELECT toString(f.${quoteClickHouseIdentifier(fact.unit_id_column)}) AS unit_id,
      toUnixTimestamp64Milli(toDateTime64(f.${quoteClickHouseIdentifier(fact.timestamp_column)}, 3)) AS at, ${value} AS v
    FROM (${fact.sql}
    ) AS f${where}
  ), u AS (
    SELECT x.variant_key AS variant_key, ${unitValue(metric, counted)} AS m, countIf(${counted}) AS ev
    FROM x LEFT JOIN e ON e.unit_id = x.unit_id
    GROUP BY x.unit_id, x.variant_key, x.exposed_at
  )
  SELECT u.variant_key AS variant_key, count() AS units, ${variantColumns(metric)}, sum(u.ev) AS ev FROM u GROUP BY u.variant_key`;
  const params: Record<string, unknown> = { window: metric.window_ms };
  if (metric.cap !== null) params.cap = metric.cap;
  if (eventsBefore !== null) params.stop = eventsBefore;
  return { text, params };
}

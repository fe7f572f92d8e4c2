/**
 * The statement a PostgreSQL source runs for one metric (docs/warehouse.md "The analysis on the
 * source"): the experiment's live exposures arrive as three parameter arrays (unit, variant,
 * exposed_at in epoch ms) unnested into rows; each unit's fact rows inside the metric's window are
 * reduced to its value; the values are summed per variant. Only per-variant rows come back: the
 * same sufficient statistics (n, sum, sum of squares, conversions) and the same per-unit rules as
 * the SQL store (sql/aggregate.ts), so a fact table holding Verdict's events gives the same totals.
 */
import type { WarehouseMetricSpec } from './spec.js';

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The unit's value over its counted rows `e` (NULL when a sum or mean has no number). */
function unitValue(metric: WarehouseMetricSpec): string {
  if (metric.kind === 'binary') return 'CASE WHEN COUNT(e.unit_id) > 0 THEN 1 ELSE 0 END';
  if (metric.aggregation === 'count' || metric.fact.column === null) return 'COUNT(e.unit_id)';
  return metric.aggregation === 'sum' ? 'SUM(e.v)' : 'AVG(e.v)';
}

/** The per-variant aggregates of the unit values m (capped from above by the parameter `cap` when the metric caps). */
function variantColumns(metric: WarehouseMetricSpec, cap: string | null): string {
  const m = cap === null ? 'u.m' : `(CASE WHEN u.m > ${cap}::double precision THEN ${cap}::double precision ELSE u.m END)`;
  const n = metric.aggregation === 'mean' && metric.kind !== 'binary' ? `COUNT(${m})` : 'COUNT(*)';
  let conversions: string;
  if (metric.kind === 'binary') conversions = `SUM(${m})`;
  else if (metric.aggregation === 'count') conversions = `SUM(CASE WHEN ${m} > 0 THEN 1 ELSE 0 END)`;
  else conversions = `COUNT(${m})`;
  return `${n} AS n0, SUM(${m}) AS s0, SUM(${m} * ${m}) AS q0, ${conversions} AS c0`;
}

/** The statement and its parameters after the exposures: the window, then the cap and the stop where there are. */
export interface MetricStatement {
  text: string;
  params: unknown[];
}

/**
 * Parameters: $1 unit ids (text[]), $2 variant keys (text[]), $3 exposed_at (bigint[], epoch ms),
 * $4 the window (ms), then the cap (when the metric caps) and the stop (when the experiment stopped).
 */
export function postgresMetricStatement(metric: WarehouseMetricSpec, eventsBefore: number | null): MetricStatement {
  const params: unknown[] = [metric.window_ms];
  const next = (value: unknown) => `$${4 + params.push(value) - 1}`;
  const cap = metric.cap === null ? null : next(metric.cap);
  const stop = eventsBefore === null ? null : next(eventsBefore);
  const fact = metric.fact;
  const value = fact.column === null ? 'NULL::double precision' : `CAST(f.${quoteIdentifier(fact.column)} AS double precision)`;
  const where = fact.filter === null ? '' : `\n    WHERE (${fact.filter}\n    )`;
  const before = stop === null ? '' : ` AND e.at < ${stop}::bigint`;
  const text = `WITH x AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) AS x(unit_id, variant_key, exposed_at)
  ), e AS (
    SELECT CAST(f.${quoteIdentifier(fact.unit_id_column)} AS text) AS unit_id,
      floor(extract(epoch FROM f.${quoteIdentifier(fact.timestamp_column)}) * 1000)::bigint AS at, ${value} AS v
    FROM (${fact.sql}
    ) AS f${where}
  ), u AS (
    SELECT x.variant_key, ${unitValue(metric)} AS m, COUNT(e.unit_id) AS ev
    FROM x LEFT JOIN e ON e.unit_id = x.unit_id AND e.at >= x.exposed_at AND e.at < x.exposed_at + $4::bigint${before}
    GROUP BY x.unit_id, x.variant_key
  )
  SELECT u.variant_key, COUNT(*) AS units, ${variantColumns(metric, cap)}, SUM(u.ev) AS ev FROM u GROUP BY u.variant_key`;
  return { text, params };
}

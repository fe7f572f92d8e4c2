/**
 * The statement a source runs for one metric (docs/warehouse.md "The analysis on the source"),
 * written once for both dialects: the experiment's live exposures `x` (shipped as three arrays);
 * per fact table the rows `e{k}` (unit, epoch ms, the column as a float) its filter keeps; per
 * value a unit needs (the metric over its window, a ratio's denominator, the CUPED covariate over
 * the lookback) the unit's counts and sums `v{k}` over the rows of that period; the units `u`
 * with their values; and the per-variant sums of the SQL store (sql/aggregate.ts,
 * sql/cuped-totals.ts), so a fact table holding Verdict's events gives the same totals. Only
 * per-variant rows come back. Verdict's own numbers (window, cap, stop) are written as literals.
 */
import type { WarehouseMetricSpec } from './spec.js';

/** What differs between PostgreSQL and ClickHouse. */
export interface StatementDialect {
  quote(name: string): string;
  /** The exposures as rows (unit_id, variant_key, exposed_at). */
  exposures: string;
  /** The unit id as text, the timestamp as epoch milliseconds, a column as a nullable float. */
  text(expression: string): string;
  epochMs(expression: string): string;
  float(expression: string): string;
  /** A unit's rows of one period: `e` joined to `x` on the unit, within [from, to). */
  periodRows(rows: string, from: string, to: string): string;
  /** The unit value of a period (`v` the per-unit aggregates c, cv, s, a), NULL where the SQL store has none. */
  value(metric: WarehouseMetricSpec, v: string): string;
}

export function literal(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(value);
}

/** A period of a unit's rows: the metric's window after the exposure, or the lookback before it. */
interface Period {
  metric: WarehouseMetricSpec;
  from: string;
  to: string;
}

interface Plan {
  facts: WarehouseMetricSpec['fact'][];
  ctes: string[];
  /** The unit value columns of u: m (the metric), d (a ratio's denominator), p (the covariate). */
  columns: string[];
  joins: string[];
}

function factIndex(plan: Plan, fact: WarehouseMetricSpec['fact']): number {
  const found = plan.facts.findIndex((item) => JSON.stringify(item) === JSON.stringify(fact));
  return found >= 0 ? found : plan.facts.push(fact) - 1;
}

export function factRows(dialect: StatementDialect, fact: WarehouseMetricSpec['fact']): string {
  const value = fact.column === null ? dialect.float('NULL') : dialect.float(`f.${dialect.quote(fact.column)}`);
  const where = fact.filter === null ? '' : `\n    WHERE (${fact.filter}\n    )`;
  return `SELECT ${dialect.text(`f.${dialect.quote(fact.unit_id_column)}`)} AS unit_id, ${dialect.epochMs(`f.${dialect.quote(fact.timestamp_column)}`)} AS at, ${value} AS v
    FROM (${fact.sql}
    ) AS f${where}`;
}

/** Adds the per-unit aggregates of one period and the column `alias` holding the unit's value. */
function addValue(dialect: StatementDialect, plan: Plan, period: Period, alias: string, stop: string): void {
  const fact = factIndex(plan, period.metric.fact);
  const v = `v${plan.joins.length}`;
  // The stop bounds every period (the SQL store's event join stops there too).
  const bounded = stop === '' ? '' : ` AND e.at < ${stop}`;
  plan.ctes.push(`${v} AS (
    SELECT x.unit_id AS unit_id, COUNT(*) AS c, COUNT(e.v) AS cv, SUM(e.v) AS s, AVG(e.v) AS a
    FROM ${dialect.periodRows(`e${fact}`, period.from, period.to + bounded)}
    GROUP BY x.unit_id
  )`);
  plan.joins.push(`LEFT JOIN ${v} ON ${v}.unit_id = x.unit_id`);
  plan.columns.push(`${dialect.value(period.metric, v)} AS ${alias}`);
}

function capped(value: string, cap: number | null | undefined, dialect: StatementDialect): string {
  if (cap === null || cap === undefined) return value;
  const c = dialect.float(literal(cap));
  return `(CASE WHEN ${value} > ${c} THEN ${c} ELSE ${value} END)`;
}

/** The per-variant columns of the SQL store's metricColumns, ratioColumns and covariateColumns (index 0). */
function variantColumns(dialect: StatementDialect, metric: WarehouseMetricSpec): string[] {
  const m = capped('u.m', metric.cap, dialect);
  if (metric.denominator) {
    const x = `COALESCE(${m}, 0)`;
    const y = `COALESCE(${capped('u.d', metric.denominator.cap, dialect)}, 0)`;
    return [
      'COUNT(*) AS n0',
      `SUM(${x}) AS s0`,
      `SUM(${x} * ${x}) AS q0`,
      `SUM(CASE WHEN ${y} <> 0 THEN 1 ELSE 0 END) AS c0`,
      `SUM(${y}) AS sy0`,
      `SUM(${y} * ${y}) AS qy0`,
      `SUM(${x} * ${y}) AS xy0`,
    ];
  }
  const mean = metric.aggregation === 'mean' && metric.kind !== 'binary';
  let conversions: string;
  if (metric.kind === 'binary') conversions = `SUM(${m})`;
  else if (metric.aggregation === 'count') conversions = `SUM(CASE WHEN ${m} > 0 THEN 1 ELSE 0 END)`;
  else conversions = `COUNT(${m})`;
  const columns = [`${mean ? `COUNT(${m})` : 'COUNT(*)'} AS n0`, `SUM(${m}) AS s0`, `SUM(${m} * ${m}) AS q0`, `${conversions} AS c0`];
  if (metric.percentile) columns.push(`SUM(CASE WHEN ${m} <> 0 THEN 1 ELSE 0 END) AS z0`);
  if (metric.lookback_ms) {
    const x = `COALESCE(${capped('u.p', metric.cap, dialect)}, 0)`;
    const y = `COALESCE(${m}, 0)`;
    const only = (term: string) => (mean ? `CASE WHEN ${m} IS NOT NULL THEN ${term} ELSE 0 END` : term);
    columns.push(`SUM(${only(x)}) AS px0`, `SUM(${only(`${x} * ${x}`)}) AS pxx0`, `SUM(${only(`${x} * ${y}`)}) AS pxy0`);
  }
  return columns;
}

/** The CTEs up to u: one row per exposed unit with its variant and values m (and d, p). */
function unitsOf(dialect: StatementDialect, metric: WarehouseMetricSpec, eventsBefore: number | null, withCovariate: boolean): string {
  const plan: Plan = { facts: [], ctes: [], columns: [], joins: [] };
  const stop = eventsBefore === null ? '' : literal(eventsBefore);
  const window = (item: WarehouseMetricSpec): Period => ({ metric: item, from: 'x.exposed_at', to: `x.exposed_at + ${literal(item.window_ms)}` });
  addValue(dialect, plan, window(metric), 'm', stop);
  if (metric.denominator) addValue(dialect, plan, window(metric.denominator), 'd', stop);
  if (withCovariate && metric.lookback_ms)
    addValue(dialect, plan, { metric, from: `x.exposed_at - ${literal(metric.lookback_ms)}`, to: 'x.exposed_at' }, 'p', stop);
  const facts = plan.facts.map((fact, index) => `e${index} AS (\n    ${factRows(dialect, fact)}\n  )`);
  return `WITH x AS (
    ${dialect.exposures}
  ), ${[...facts, ...plan.ctes].join(', ')}, u AS (
    SELECT x.variant_key AS variant_key, ${plan.columns.join(', ')}, COALESCE(v0.c, 0) AS ev
    FROM x ${plan.joins.join(' ')}
  )`;
}

/** Per variant: units, the metric's sums (columns n0, s0, ... as the SQL store names them) and the rows counted (ev). */
export function metricStatement(dialect: StatementDialect, metric: WarehouseMetricSpec, eventsBefore: number | null): string {
  return `${unitsOf(dialect, metric, eventsBefore, true)}
  SELECT u.variant_key AS variant_key, COUNT(*) AS units, ${variantColumns(dialect, metric).join(', ')}, SUM(u.ev) AS ev FROM u GROUP BY u.variant_key`;
}

/** q in billionths, as sql/percentile-cap.ts takes it (0.99 is 990000000 exactly). */
export const PERCENTILE_SCALE = 1_000_000_000;

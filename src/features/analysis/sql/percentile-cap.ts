/**
 * Percentile caps (docs/metrics.md "Capping"): the cap is the `quantile` of the per-unit values of
 * all exposed units of the experiment whose value is nonzero, recomputed at each snapshot.
 *
 * Definition: linear interpolation between order statistics (Hyndman and Fan's type 7, the
 * default of numpy.quantile and PostgreSQL's percentile_cont): with the k nonzero values sorted
 * as v_0 <= ... <= v_{k-1} and h = (k - 1) q, cap = v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h)).
 *
 * Usually the cap comes out of the analysis pass itself (resolveFromTopValues below); this
 * statement is the fallback, and the way for the components of a ratio.
 *
 * Computed in the database by one statement, the same on both dialects: window functions number
 * the sorted nonzero per-unit values (ROW_NUMBER) and count them (COUNT(*) OVER ()), and only the
 * two order statistics around h leave the database. floor(h) is taken there by integer division,
 * with q as an integer count of billionths (SQLite has no FLOOR everywhere, and PostgreSQL rounds
 * a real cast to integer). The sort is the database's: SQLite's sorter spills to temporary
 * files, PostgreSQL sorts within work_mem and spills to disk beyond it.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { unitValuesQuery } from './aggregate.js';
import type { CapScope, MetricSpec, TopLists, VariantTotals } from '../store/contract.js';

function numberOf(value: unknown): number {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number)) throw new Error(`the percentile query returned a non-finite number: ${String(value)}`);
  return number;
}

/** q in billionths: the percentile's precision (0.99 is 990000000 exactly). */
const SCALE = 1_000_000_000;

/** The `quantile` of the experiment's nonzero per-unit values of `metric`, or null without any. */
export async function percentileCap(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  scope: CapScope,
  metric: MetricSpec,
  quantile: number,
): Promise<number | null> {
  const scaled = Math.round(quantile * SCALE);
  const below = sql`((w.k - 1) * ${sql.lit(scaled)}) / ${sql.lit(SCALE)}`;
  const query = sql<{ value: unknown; rn: unknown; k: unknown }>`SELECT w.value AS value, w.rn AS rn, w.k AS k FROM (
      SELECT v.m0 AS value, ROW_NUMBER() OVER (ORDER BY v.m0) AS rn, COUNT(*) OVER () AS k
      FROM (${unitValuesQuery(seam, scope, metric)}) AS v WHERE v.m0 IS NOT NULL AND v.m0 <> 0
    ) AS w
    WHERE w.rn - 1 = ${below} OR w.rn - 1 = ${below} + 1
    ORDER BY w.rn`;
  const [rows] = await reads.all([query.compile(executor)]);
  const first = rows?.[0];
  if (first === undefined) return null;
  const count = numberOf(first.k);
  const h = ((count - 1) * scaled) / SCALE;
  const lower = numberOf(first.value);
  const upper = rows?.[1] === undefined ? lower : numberOf(rows[1].value);
  return lower + (h - Math.floor(h)) * (upper - lower);
}

/** The position of the lower order statistic: floor(h) for h = (k - 1) q, in the SQL's arithmetic. */
function floorOfH(count: number, quantile: number): { below: number; fraction: number } {
  const scaled = Math.round(quantile * SCALE);
  const h = ((count - 1) * scaled) / SCALE;
  return { below: Math.floor(h), fraction: h - Math.floor(h) };
}

/** Most values a statement returns for one metric: beyond this the cap falls back to its own statement. */
export const MAX_TOP_VALUES = 100_000;

/**
 * How many of its largest values a statement over `units` units returns. One statement over the
 * whole experiment needs (1 - q) units + 2 at most (the cap's rank from the top); a chunk gets
 * twice its share plus 10, and resolveFromTopValues checks that no chunk was cut short.
 */
export function topLimit(quantile: number, units: number, chunked: boolean): number {
  const share = Math.ceil((1 - quantile) * units);
  return Math.min(MAX_TOP_VALUES, chunked ? 2 * share + 10 : share + 2);
}

/**
 * The percentile cap from each statement's largest nonzero values, and the totals corrected to
 * the capped values: for every unit above the cap, sum -= (x - cap) and sum of squares -= (x^2 -
 * cap^2) (n and conversions do not change: a capped value stays nonzero). Every value above the
 * cap is among the returned ones when each statement that hit its LIMIT returned values down to
 * the cap's lower order statistic; otherwise the answer is undefined (the caller falls back to
 * percentileCap and a second pass). Null when no unit has a nonzero value.
 */
export function resolveFromTopValues(
  totals: Map<string, VariantTotals>,
  index: number,
  quantile: number,
  lists: TopLists | undefined,
): number | null | undefined {
  const count = [...totals.values()].reduce((sum, variant) => sum + (variant.metrics[index]?.nonzero ?? 0), 0);
  if (count === 0) return null;
  const { below, fraction } = floorOfH(count, quantile);
  const largest = (lists?.statements ?? []).flatMap((statement) => statement.values).sort((a, b) => b.value - a.value);
  const lowerIndex = count - 1 - below;
  const lower = largest[lowerIndex]?.value;
  if (lower === undefined) return undefined;
  const cut = (lists?.statements ?? []).some((statement) => statement.truncated && (statement.values.at(-1)?.value ?? Infinity) > lower);
  if (cut) return undefined;
  const upper = lowerIndex === 0 ? lower : (largest[lowerIndex - 1]?.value ?? lower);
  const cap = lower + fraction * (upper - lower);
  for (const { variant_key: key, value } of largest) {
    if (value <= cap) break;
    const metric = totals.get(key)?.metrics[index];
    if (!metric) continue;
    metric.sum -= value - cap;
    metric.sum_of_squares -= value * value - cap * cap;
  }
  return cap;
}

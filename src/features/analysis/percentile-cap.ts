/**
 * Percentile caps (decisions.md section 10): the cap is the `quantile` of the per-unit values of
 * all exposed units of the experiment whose value is nonzero, recomputed at each snapshot.
 *
 * Definition: linear interpolation between order statistics (Hyndman and Fan's type 7, the
 * default of numpy.quantile and PostgreSQL's percentile_cont): with the k nonzero values sorted
 * as v_0 <= ... <= v_{k-1} and h = (k - 1) q, cap = v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h)).
 *
 * Computed in the database by one statement, the same on both dialects: window functions number
 * the sorted nonzero per-unit values (ROW_NUMBER) and count them (COUNT(*) OVER ()), and only the
 * two order statistics around h leave the database. floor(h) is taken there by integer division,
 * with q as an integer count of billionths (SQLite has no FLOOR everywhere, and PostgreSQL rounds
 * a real cast to integer). The sort is the database's: SQLite's sorter spills to temporary
 * files, PostgreSQL sorts within work_mem and spills to disk beyond it.
 */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { ReadPool } from '../../db/read-pool.js';
import { unitValuesQuery, type MetricSpec } from './aggregate-store.js';

export interface CapScope {
  workspaceId: string;
  experimentId: string;
  eventsBefore: number | null;
}

function numberOf(value: unknown): number {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number)) throw new Error(`the percentile query returned a non-finite number: ${String(value)}`);
  return number;
}

/** q in billionths: the percentile's precision (0.99 is 990000000 exactly). */
const SCALE = 1_000_000_000;

/** The `quantile` of the experiment's nonzero per-unit values of `metric`, or null without any. */
export async function percentileCap(executor: Executor, seam: DialectSeam, reads: ReadPool, scope: CapScope, metric: MetricSpec, quantile: number): Promise<number | null> {
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

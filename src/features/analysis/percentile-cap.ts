/**
 * Percentile caps (decisions.md section 10): the cap is the `quantile` of the per-unit values of
 * all exposed units of the experiment whose value is nonzero, recomputed at each snapshot.
 *
 * Definition: linear interpolation between order statistics (Hyndman and Fan's type 7, the
 * default of numpy.quantile and PostgreSQL's percentile_cont): with the k nonzero values sorted
 * as v_0 <= ... <= v_{k-1} and h = (k - 1) q, cap = v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h)).
 *
 * Computed in the database, on both dialects the same way: one statement counts the nonzero
 * per-unit values, a second reads the two order statistics around h with ORDER BY ... LIMIT 2
 * OFFSET floor(h). Only two numbers leave the database; the sort is the database's (SQLite keeps
 * a bounded sorter, PostgreSQL sorts within work_mem and spills to disk beyond it).
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

/** The `quantile` of the experiment's nonzero per-unit values of `metric`, or null without any. */
export async function percentileCap(executor: Executor, seam: DialectSeam, reads: ReadPool, scope: CapScope, metric: MetricSpec, quantile: number): Promise<number | null> {
  const values = unitValuesQuery(seam, scope, metric);
  const nonzero = sql`FROM (${values}) AS v WHERE v.m0 IS NOT NULL AND v.m0 <> 0`;
  const [countRows] = await reads.all([sql<{ k: unknown }>`SELECT COUNT(*) AS k ${nonzero}`.compile(executor)]);
  const count = numberOf(countRows?.[0]?.k ?? 0);
  if (count === 0) return null;
  const h = (count - 1) * quantile;
  const below = Math.floor(h);
  const [orderRows] = await reads.all([sql`SELECT v.m0 AS value ${nonzero} ORDER BY v.m0 LIMIT 2 OFFSET ${below}`.compile(executor)]);
  const lower = numberOf(orderRows?.[0]?.value);
  const upper = orderRows?.[1] === undefined ? lower : numberOf(orderRows[1].value);
  return lower + (h - below) * (upper - lower);
}

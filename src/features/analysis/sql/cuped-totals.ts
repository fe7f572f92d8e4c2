/**
 * The SQL side of CUPED (docs/statistics.md "2b. CUPED variance reduction"): the per-variant sums of each metric's
 * pre-period covariate x, computed in the same pass as the metric (sql/aggregate.ts adds a
 * per-unit column p{i} over [exposed_at - lookback, exposed_at) and widens its event join back by
 * the longest lookback). Only sums leave the database, so memory does not grow with units.
 *
 * Over the same units as the metric's n (for a mean metric, the units with a value): x is the
 * unit's pre-period value capped like the metric, 0 without pre-period events (a mean metric's
 * AVG of nothing is NULL, read as 0 too); y is the unit's metric value as the metric sums it.
 */
import { sql, type RawBuilder } from 'kysely';
import { capped, type Column } from './columns.js';
import type { MetricSpec } from '../store/contract.js';

/** The longest CUPED lookback among the metrics (0 without one): how far back the event join reaches. */
export function longestLookbackOf(metrics: readonly MetricSpec[]): number {
  return metrics.reduce((longest, metric) => Math.max(longest, metric.lookback_ms ?? 0), 0);
}

/** Sums of x, x^2 and x y for metric i (columns px{i}, pxx{i}, pxy{i}). */
export function covariateColumns(metric: MetricSpec, index: number): Column[] {
  const value = capped(sql.ref(`u.m${index}`), metric.cap);
  const x = sql`COALESCE(${capped(sql.ref(`u.p${index}`), metric.cap)}, 0)`;
  const y = sql`COALESCE(${value}, 0)`;
  // A mean metric's n counts only the units with a value; every other metric counts all units.
  const only = (term: RawBuilder<unknown>) =>
    metric.aggregation === 'mean' && metric.kind !== 'binary' ? sql`CASE WHEN ${value} IS NOT NULL THEN ${term} ELSE 0 END` : term;
  return [
    [`px${index}`, sql`SUM(${only(x)})`],
    [`pxx${index}`, sql`SUM(${only(sql`${x} * ${x}`)})`],
    [`pxy${index}`, sql`SUM(${only(sql`${x} * ${y}`)})`],
  ];
}

/**
 * A bandit's per-period totals in SQL (docs/statistics.md "Bandits"): for each allocation period
 * and variant, the live units whose exposure fell in the period and the metric's sufficient
 * statistics over them. What leaves the database is one row per (period, variant).
 */
import { sql, type RawBuilder } from 'kysely';
import type { CapScope, MetricSpec, PeriodCell } from '../store/contract.js';
import { periodCellOf } from '../store/fold.js';
import { metricColumns, valueColumns, valueJoin } from './aggregate.js';
import type { SqlStoreDeps } from './deps.js';
import { liveUnitsOf, unitGroupOf, unitsTable } from './unit-source.js';

/** The period index of a unit exposed at v.exposed_at: the last period that started at or before it (0 before the first). */
function periodOf(starts: readonly number[]): RawBuilder<number> {
  const later = starts
    .map((start, index) => ({ start, index }))
    .slice(1)
    .reverse()
    .map(({ start, index }) => sql` WHEN v.exposed_at >= ${start} THEN ${sql.lit(index)}`);
  if (later.length === 0) return sql<number>`0`;
  return sql<number>`(CASE${sql.join(later, sql``)} ELSE 0 END)`;
}

function periodQuery(deps: SqlStoreDeps, scope: CapScope, spec: MetricSpec, starts: readonly number[]): RawBuilder<Record<string, unknown>> {
  const source = scope.source ?? 'events';
  const input = { ...scope, metrics: [spec], source };
  const columns = metricColumns(spec, 0).map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`);
  const perUnit = sql`SELECT x.variant_key AS variant_key, MAX(x.exposed_at) AS exposed_at${sql.join(valueColumns(deps.seam, input), sql``)}
      FROM ${unitsTable(source)}${valueJoin(input)}
      WHERE ${liveUnitsOf(source, scope.experimentId)}
      GROUP BY ${unitGroupOf(deps.seam, source)}`;
  return sql`SELECT u.period AS period, u.variant_key AS variant_key, COUNT(*) AS units${sql.join(columns, sql``)}
    FROM (SELECT ${periodOf(starts)} AS period, v.* FROM (${perUnit}) AS v) AS u
    GROUP BY u.period, u.variant_key`;
}

export async function periodCells(deps: SqlStoreDeps, scope: CapScope, spec: MetricSpec, starts: readonly number[]): Promise<PeriodCell[]> {
  const [rows] = await deps.reads.all([periodQuery(deps, scope, spec, starts).compile(deps.db)]);
  return (rows ?? []).map(periodCellOf);
}

/**
 * The per-unit rows the maintained totals (rollup-totals.ts) are kept from: each refreshed unit's
 * variant, breakdown values and per-metric values, read from its rollups as unit-source.ts reads
 * them for a snapshot. A refresh reads its touched units' rows once, before it writes: the units
 * that only gain the staged new events get their values after the write from the same statement
 * (the stored columns plus the staged sums, as the upsert adds them), and only the units whose
 * rows the refresh replaces are read again after it (docs/analysis.md "Maintained totals").
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import { rawColumns } from './breakdowns-store.js';
import type { Staged } from './rollup-fresh.js';
import type { TotalsPlan } from './rollup-totals.js';
import { rollupJoin, rollupValueColumns } from './unit-source.js';

/** The per-unit values (m{i}, d{i}, p{i}) and breakdown values (r{k}) of the refreshed units `units` selects. */
export async function unitRows(executor: Executor, seam: DialectSeam, experimentId: string, plan: TotalsPlan, units: RawBuilder<unknown>) {
  const values = sql.join(rollupValueColumns(plan.metrics), sql``);
  const result = await sql<Record<string, unknown>>`SELECT x.variant_key AS variant_key${rawColumns(seam, plan.breakdowns, true, 'rollups')}${values}
    FROM analysis_rollup_units AS x${rollupJoin(plan.metrics)}
    WHERE x.experiment_id = ${experimentId} AND ${units}
    GROUP BY x.experiment_id, x.unit_id`.execute(executor);
  return result.rows;
}

/**
 * The touched units' values (m{i}, d{i}, p{i}) and, with `fresh` (the staged new events, only
 * added to the rows: rollup-fresh.ts), the values of its units after the write too (am{i}, ad{i},
 * ap{i}, and `fresh_n` non-null), computed from the same rows and the staged sums, so each
 * touched row is read once. SQLite: driven from the touched list (each unit by primary key, its
 * rollup rows as one range); PostgreSQL plans the IN list itself.
 */
export async function touchedRows(executor: Executor, seam: DialectSeam, experimentId: string, plan: TotalsPlan, fresh: Staged | null = null) {
  const values = sql.join(rollupValueColumns(plan.metrics), sql``);
  const column = (metricId: string, name: string) => sql.ref(`f.${name}${fresh?.slots.findIndex((slot) => slot.metric_id === metricId) ?? -1}`);
  const after =
    fresh === null
      ? sql``
      : sql`, MAX(f.n) AS fresh_n${sql.join(
          rollupValueColumns(plan.metrics, (id, name) => sql`MAX(${column(id, name)})`, 'a'),
          sql``,
        )}`;
  const joinFresh = (unit: string) => (fresh === null ? sql`` : sql` LEFT JOIN ${sql.raw(fresh.table)} AS f ON f.unit_id = ${sql.ref(unit)}`);
  if (seam.name !== 'sqlite') {
    const result = await sql<Record<string, unknown>>`SELECT x.variant_key AS variant_key${rawColumns(seam, plan.breakdowns, true, 'rollups')}${values}${after}
      FROM analysis_rollup_units AS x${rollupJoin(plan.metrics)}${joinFresh('x.unit_id')}
      WHERE x.experiment_id = ${experimentId} AND x.unit_id IN (SELECT t.unit_id FROM analysis_rollup_touched AS t WHERE t.experiment_id = ${experimentId})
      GROUP BY x.experiment_id, x.unit_id`.execute(executor);
    return result.rows;
  }
  const result = await sql<Record<string, unknown>>`SELECT x.variant_key AS variant_key${rawColumns(seam, plan.breakdowns, true, 'rollups')}${values}${after}
    FROM analysis_rollup_touched AS t CROSS JOIN analysis_rollup_units AS x${rollupJoin(plan.metrics, true)}${joinFresh('t.unit_id')}
    WHERE t.experiment_id = ${experimentId} AND x.experiment_id = t.experiment_id AND x.unit_id = t.unit_id
    GROUP BY t.unit_id`.execute(executor);
  return result.rows;
}

/** The rows of the units with staged new events as they are after the write (their am{i}, ad{i}, ap{i} as m{i}, d{i}, p{i}). */
export function freshAfter(rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return rows
    .filter((row) => row.fresh_n !== null && row.fresh_n !== undefined)
    .map((row) => {
      const after: Record<string, unknown> = { ...row };
      for (const key of Object.keys(row)) if (/^a[mdp]\d+$/.test(key)) after[key.slice(1)] = row[key];
      return after;
    });
}

/**
 * The per-unit rows the maintained totals (sql/rollup/totals.ts) are kept from: each refreshed unit's
 * variant, breakdown values and per-metric values, read from its rollups as unit-source.ts reads
 * them for a snapshot. A refresh reads its touched units' rows once, before it writes: the units
 * that only gain the staged new events get their values after the write from the same statement
 * (the stored columns plus the staged sums, as the upsert adds them), and only the units whose
 * rows the refresh replaces are read again after it (docs/analysis.md "Maintained totals").
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import type { DialectSeam } from '../../../../db/dialect.js';
import { analysisSettingsOf } from '../dialect-settings.js';
import { rawColumns } from '../breakdowns.js';
import type { Staged } from './fresh.js';
import { rollupJoin, rollupValueColumns } from '../unit-source.js';
import type { TotalsPlan } from '../../store/contract.js';

/**
 * One row per unit of the rollups `x` (analysis_rollup_units joined to its rollup rows in `from`):
 * its variant, its breakdown values (r{k}) and `columns`. The reads below differ only in how they
 * find their units.
 */
async function selectUnitRows(
  executor: Executor,
  seam: DialectSeam,
  plan: TotalsPlan,
  columns: RawBuilder<unknown>,
  from: RawBuilder<unknown>,
  where: RawBuilder<unknown>,
  unit: RawBuilder<unknown>,
) {
  const result = await sql<Record<string, unknown>>`SELECT x.variant_key AS variant_key${rawColumns(seam, plan.breakdowns, true, 'rollups')}${columns}
    FROM ${from} WHERE ${where} GROUP BY ${unit}`.execute(executor);
  return result.rows;
}

/** The per-unit values (m{i}, d{i}, p{i}) and breakdown values (r{k}) of the refreshed units `units` selects. */
export async function unitRows(executor: Executor, seam: DialectSeam, experimentId: string, plan: TotalsPlan, units: RawBuilder<unknown>) {
  const values = sql.join(rollupValueColumns(plan.metrics), sql``);
  const from = sql`analysis_rollup_units AS x${rollupJoin(plan.metrics)}`;
  return selectUnitRows(executor, seam, plan, values, from, sql`x.experiment_id = ${experimentId} AND ${units}`, sql`x.experiment_id, x.unit_id`);
}

/**
 * The touched units' values (m{i}, d{i}, p{i}) and, with `fresh` (the staged new events, only
 * added to the rows: sql/rollup/fresh.ts), the values of its units after the write too (am{i}, ad{i},
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
  const columns = sql`${values}${after}`;
  if (!analysisSettingsOf(seam).crossJoinsUnits) {
    const from = sql`analysis_rollup_units AS x${rollupJoin(plan.metrics)}${joinFresh('x.unit_id')}`;
    const where = sql`x.experiment_id = ${experimentId} AND x.unit_id IN (SELECT t.unit_id FROM analysis_rollup_touched AS t WHERE t.experiment_id = ${experimentId})`;
    return selectUnitRows(executor, seam, plan, columns, from, where, sql`x.experiment_id, x.unit_id`);
  }
  const from = sql`analysis_rollup_touched AS t CROSS JOIN analysis_rollup_units AS x${rollupJoin(plan.metrics, true)}${joinFresh('t.unit_id')}`;
  const where = sql`t.experiment_id = ${experimentId} AND x.experiment_id = t.experiment_id AND x.unit_id = t.unit_id`;
  return selectUnitRows(executor, seam, plan, columns, from, where, sql`t.unit_id`);
}

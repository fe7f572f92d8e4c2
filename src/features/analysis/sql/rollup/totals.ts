/**
 * Maintained totals (docs/analysis.md "Incremental analysis", decisions §13): per slice (the whole
 * experiment, or one value of one breakdown) and variant, the units and each metric's sufficient
 * statistics, kept in analysis_rollup_totals and brought up to date by each refreshed unit's
 * old-to-new difference, so that a snapshot from rollups reads a few rows instead of every unit.
 *
 * - A unit's contribution is what the per-variant SQL (sql/aggregate.ts metricColumns,
 *   cuped-totals.ts) adds for it, computed here from the same per-unit values (unit-source.ts).
 * - Sums are exact (lib/exact-sum.ts): subtracting a unit's old contribution and adding its new
 *   one a million times leaves exactly the sum of the current contributions.
 * - The totals are of one plan (the metrics' specs with their absolute caps, CUPED, the
 *   breakdowns); another plan, a rebuilt metric or a first build rebuilds them from the rollups
 *   (rebuildTotals). A metric with a percentile cap (its own or a ratio component's) is kept
 *   uncapped and its snapshot values come from the rollups by the general pass instead.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import type { DialectSeam } from '../../../../db/dialect.js';
import type { Staged } from './fresh.js';
import { analysisSettingsOf } from '../dialect-settings.js';
import { sliceFolds } from '../../clickhouse/metric-slices.js';
import { accumulate, PlanFold, type Cells } from './contributions.js';
import { mergeCell, totalsOfRows } from './stored-cells.js';
import { accumulateKept, keptSliceFolds, ownSlices } from './kept-slices.js';
import { touchedRows, unitRows } from './touched.js';
import { unitIdAfter } from '../unit-source.js';
import type { StoredTotals, TotalsPlan } from '../../store/contract.js';

/** Adds the cells' differences to the stored totals; a cell left without units goes. */
async function applyCells(executor: Executor, experimentId: string, cells: Cells): Promise<void> {
  if (cells.size === 0) return;
  const stored = await executor.selectFrom('analysis_rollup_totals').selectAll().where('experiment_id', '=', experimentId).execute();
  const known = new Map(stored.map((row) => [`${row.slice}\u0000${row.variant_key}`, row]));
  for (const [key, delta] of cells) {
    const values = mergeCell(known.get(key), delta);
    if (values.units === 0) {
      await executor
        .deleteFrom('analysis_rollup_totals')
        .where('experiment_id', '=', experimentId)
        .where('slice', '=', delta.slice)
        .where('variant_key', '=', delta.variant)
        .execute();
      continue;
    }
    const where = { experiment_id: experimentId, slice: delta.slice, variant_key: delta.variant };
    await executor
      .insertInto('analysis_rollup_totals')
      .values({ ...where, ...values })
      .onConflict((oc) => oc.columns(['experiment_id', 'slice', 'variant_key']).doUpdateSet(values))
      .execute();
  }
}

/** What a refresh's `touch` step says of the units it listed. */
export interface Touched {
  /** The staged new events of the units that only gain events (their rows after the write are computed from it), or null. */
  fresh: Staged | null;
  /** The listed units whose rows the write replaces (a query of unit ids): read again after it; null when there are none. */
  replaced: RawBuilder<unknown> | null;
}

/**
 * A refresh that changes some units: `touch` lists them (in analysis_rollup_touched), their old
 * contributions are taken away, `write` changes the rollups, and their new ones are added. The
 * rows of units that only gain staged events are read once, before the write, with what they
 * become (touchedRows); only the replaced units are read after it.
 */
export async function maintainTotals(
  executor: Executor,
  seam: DialectSeam,
  experimentId: string,
  plan: TotalsPlan,
  touch: () => Promise<Touched>,
  write: () => Promise<void>,
): Promise<void> {
  for (const statement of analysisSettingsOf(seam).touchedList(experimentId)) await statement.execute(executor);
  const { fresh, replaced } = await touch();
  const slots = new Set(fresh?.slots.map((slot) => slot.metric_id));
  // Every metric's rows must be among the staged slots (they are: a refresh stages every current slot).
  const usable = fresh !== null && plan.metrics.every((m) => [m, ...(m.denominator ? [m.denominator] : [])].every((part) => slots.has(part.metric_id ?? '')));
  const cells: Cells = new Map();
  const folds = [new PlanFold(cells, plan), ...keptSliceFolds(cells, sliceFolds(plan))];
  const add = (rows: readonly Record<string, unknown>[], sign: 1 | -1) => {
    for (const row of rows) for (const fold of folds) fold.add(row, sign);
  };
  const before = await touchedRows(executor, seam, experimentId, plan, usable ? fresh : null);
  for (const row of before) {
    const gained = usable && row.fresh_n !== null && row.fresh_n !== undefined;
    for (const fold of folds) {
      if (gained) fold.change(row);
      else fold.add(row, -1);
    }
  }
  await write();
  const after = !usable
    ? await touchedRows(executor, seam, experimentId, plan)
    : replaced === null
      ? []
      : await unitRows(executor, seam, experimentId, plan, sql`x.unit_id IN (${replaced})`);
  add(after, 1);
  await applyCells(executor, experimentId, cells);
  await sql`DELETE FROM analysis_rollup_touched WHERE experiment_id = ${experimentId}`.execute(executor);
}

/** Units per statement when totals are rebuilt from every unit's rollups. */
const REBUILD_UNITS = 10_000;

/** Adds the contributions of the units in (after, through] (through null: to the end) to `cells`, kept slices included. */
export async function addUnitRange(
  executor: Executor,
  seam: DialectSeam,
  experimentId: string,
  plan: TotalsPlan,
  cells: Cells,
  range: { after: string | null; through: string | null },
): Promise<void> {
  const lower = range.after === null ? sql`1 = 1` : sql`x.unit_id > ${range.after}`;
  const upper = range.through === null ? sql`` : sql` AND x.unit_id <= ${range.through}`;
  const rows = await unitRows(executor, seam, experimentId, plan, sql`${lower}${upper}`);
  accumulate(cells, plan, rows, 1);
  accumulateKept(cells, sliceFolds(plan), rows, 1);
}

/** Drops the experiment's totals and adds them up again from every unit's rollups, a chunk of units at a time. */
export async function rebuildTotals(executor: Executor, seam: DialectSeam, experimentId: string, plan: TotalsPlan): Promise<void> {
  await sql`DELETE FROM analysis_rollup_totals WHERE experiment_id = ${experimentId}`.execute(executor);
  const cells: Cells = new Map();
  let after: string | null = null;
  do {
    const through: string | null = await unitIdAfter(executor, 'rollups', experimentId, after, REBUILD_UNITS - 1);
    await addUnitRange(executor, seam, experimentId, plan, cells, { after, through });
    after = through;
  } while (after !== null);
  await applyCells(executor, experimentId, cells);
}

export { applyCells };

/** The experiment's maintained totals, as the general pass would give them. */
export async function readTotals(executor: Executor, experimentId: string, plan: TotalsPlan): Promise<StoredTotals> {
  const rows = await executor.selectFrom('analysis_rollup_totals').selectAll().where('experiment_id', '=', experimentId).where(ownSlices).execute();
  return totalsOfRows(rows, plan);
}

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
import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import type { DialectSeam } from '../../../../db/dialect.js';
import { exactAdd, exactNegate, exactOf, exactProduct, exactToNumber, formatExact, parseExact, ZERO, type Exact } from '../../../../lib/exact-sum.js';
import { foldRaw, type RawTotals } from '../breakdowns.js';
import type { Staged } from './fresh.js';
import { analysisSettingsOf } from '../dialect-settings.js';
import { sliceFolds } from '../../clickhouse/metric-slices.js';
import { accumulateKept, ownSlices } from './kept-slices.js';
import { freshAfter, touchedRows, unitRows } from './touched.js';
import { unitIdAfter } from '../unit-source.js';
import type { MetricSpec, MetricTotals, StoredTotals, TotalsPlan, VariantTotals } from '../../store/contract.js';
import { EMPTY_TOTALS, toNumber } from '../../store/fold.js';

/** Raised when the plan's meaning changes, so stored totals of an older meaning are rebuilt. */
const PLAN_VERSION = 1;

export function planHash(plan: TotalsPlan): string {
  return createHash('sha256')
    .update(JSON.stringify([PLAN_VERSION, plan]))
    .digest('hex')
    .slice(0, 32);
}

interface Sums {
  n: number;
  c: number;
  z: number;
  s: Exact;
  q: Exact;
  sy: Exact;
  qy: Exact;
  xy: Exact;
  px: Exact;
  pxx: Exact;
  pxy: Exact;
  /**
   * Integer terms added as doubles while every partial sum is a safe integer (exact), folded into
   * the exact sums before they are read (foldSmall): a BigInt per term cost most of a refresh's
   * time in JavaScript.
   */
  small: Record<ExactKey, number>;
}

const EXACT_KEYS = ['s', 'q', 'sy', 'qy', 'xy', 'px', 'pxx', 'pxy'] as const;
type ExactKey = (typeof EXACT_KEYS)[number];

const noSmall = (): Record<ExactKey, number> => ({ s: 0, q: 0, sy: 0, qy: 0, xy: 0, px: 0, pxx: 0, pxy: 0 });

function emptySums(): Sums {
  return { n: 0, c: 0, z: 0, s: ZERO, q: ZERO, sy: ZERO, qy: ZERO, xy: ZERO, px: ZERO, pxx: ZERO, pxy: ZERO, small: noSmall() };
}

/** Moves the integer terms into the exact sums. */
function foldSmall(sums: Sums): Sums {
  for (const key of EXACT_KEYS) {
    if (sums.small[key] === 0) continue;
    sums[key] = exactAdd(sums[key], exactOf(sums.small[key]));
    sums.small[key] = 0;
  }
  return sums;
}

interface Cell {
  slice: string;
  variant: string;
  units: number;
  metrics: Sums[];
}

export type Cells = Map<string, Cell>;

const MAIN_SLICE = JSON.stringify([-1, null]);

function cellOf(cells: Cells, slice: string, variant: string, metricCount: number): Cell {
  const key = `${slice}\u0000${variant}`;
  let cell = cells.get(key);
  if (!cell) {
    cell = { slice, variant, units: 0, metrics: Array.from({ length: metricCount }, emptySums) };
    cells.set(key, cell);
  }
  return cell;
}

const capped = (value: number | null, cap: number | null | undefined): number | null =>
  value === null || cap === null || cap === undefined ? value : value > cap ? cap : value;

/**
 * Adds x * y (y 1: x) times sign to the sum `key`, exactly; `rounded`: the product as a double
 * (what ClickHouse's sums add up: clickhouse/sql.ts exactSum), the sum of those exact.
 */
function addTerm(sums: Sums, key: ExactKey, x: number, y: number, sign: 1 | -1, rounded = false): void {
  if ((x === 0 || y === 0) && Number.isFinite(x) && Number.isFinite(y)) return;
  const term = x * y;
  // An integer product below 2^53 is exact in doubles, and so is a sum that stays a safe integer.
  if (Number.isSafeInteger(term) && Number.isInteger(x) && Number.isInteger(y)) {
    const next = sums.small[key] + sign * term;
    if (Number.isSafeInteger(next)) {
      sums.small[key] = next;
      return;
    }
  }
  const exact = y === 1 ? exactOf(x) : rounded ? exactOf(x * y) : exactProduct(x, y);
  sums[key] = exactAdd(sums[key], sign === 1 ? exact : exactNegate(exact));
}

/** One unit's terms of metricColumns (ratio or not) and covariateColumns, times sign. */
function addUnit(sums: Sums, spec: MetricSpec, values: { m: number | null; d: number | null; p: number | null }, sign: 1 | -1, rounded = false): void {
  if (spec.denominator) {
    const x = capped(values.m, spec.cap) ?? 0;
    const y = capped(values.d, spec.denominator.cap) ?? 0;
    sums.n += sign;
    sums.c += y !== 0 ? sign : 0;
    addTerm(sums, 's', x, 1, sign, rounded);
    addTerm(sums, 'q', x, x, sign, rounded);
    addTerm(sums, 'sy', y, 1, sign, rounded);
    addTerm(sums, 'qy', y, y, sign, rounded);
    addTerm(sums, 'xy', x, y, sign, rounded);
    return;
  }
  const value = capped(values.m, spec.cap);
  const meanOnly = spec.aggregation === 'mean' && spec.kind !== 'binary';
  if (!meanOnly || value !== null) sums.n += sign;
  const v = value ?? 0;
  if (spec.kind === 'binary') sums.c += v * sign;
  else if (spec.aggregation === 'count') sums.c += v > 0 ? sign : 0;
  else sums.c += value !== null ? sign : 0;
  if (spec.percentile && v !== 0) sums.z += sign;
  addTerm(sums, 's', v, 1, sign, rounded);
  addTerm(sums, 'q', v, v, sign, rounded);
  if (!spec.lookback_ms || (meanOnly && value === null)) return;
  const x = capped(values.p, spec.cap) ?? 0;
  addTerm(sums, 'px', x, 1, sign, rounded);
  addTerm(sums, 'pxx', x, x, sign, rounded);
  addTerm(sums, 'pxy', x, v, sign, rounded);
}

const valueOf = (raw: unknown): number | null => (raw === null || raw === undefined ? null : toNumber(raw));

/** Adds (sign 1) or takes away (sign -1) the contributions of these per-unit rows; `prefix` goes before each slice's key. */
export function accumulate(cells: Cells, plan: TotalsPlan, rows: readonly Record<string, unknown>[], sign: 1 | -1, rounded = false, prefix = ''): void {
  const count = plan.metrics.length;
  // Column names and slices made once, not per row (this loop runs for every refreshed unit, twice).
  const names = plan.metrics.map((_, index) => ({ m: `m${index}`, d: `d${index}`, p: `p${index}` }));
  const breakdowns = plan.breakdowns.map((_, k) => ({ column: `r${k}`, slices: new Map<string | null, string>() }));
  // Cells by slice, then variant, without building a key per row.
  const found = new Map<string, Map<string, Cell>>();
  const cellFor = (slice: string, variant: string, metricCount: number): Cell => {
    let variants = found.get(slice);
    if (!variants) {
      variants = new Map();
      found.set(slice, variants);
    }
    let cell = variants.get(variant);
    if (!cell) {
      cell = cellOf(cells, slice, variant, metricCount);
      variants.set(variant, cell);
    }
    return cell;
  };
  for (const row of rows) {
    const variant = String(row.variant_key);
    const main = cellFor(prefix + MAIN_SLICE, variant, count);
    main.units += sign;
    for (let index = 0; index < count; index += 1) {
      const name = names[index] as (typeof names)[number];
      addUnit(
        main.metrics[index] as Sums,
        plan.metrics[index] as MetricSpec,
        { m: valueOf(row[name.m]), d: valueOf(row[name.d]), p: valueOf(row[name.p]) },
        sign,
        rounded,
      );
    }
    breakdowns.forEach(({ column, slices }, k) => {
      const raw = row[column];
      const value = raw === null || raw === undefined ? null : String(raw);
      let slice = slices.get(value);
      if (slice === undefined) {
        slice = prefix + JSON.stringify([k, value]);
        slices.set(value, slice);
      }
      const cell = cellFor(slice, variant, plan.primary ? 1 : 0);
      cell.units += sign;
      if (plan.primary) addUnit(cell.metrics[0] as Sums, plan.primary, { m: valueOf(row.m0), d: valueOf(row.d0), p: null }, sign, rounded);
    });
  }
}

function formatSums(sums: Sums): unknown[] {
  return [sums.n, sums.c, sums.z, ...EXACT_KEYS.map((key) => formatExact(sums[key]))];
}

function parseSums(stored: unknown[]): Sums {
  const [n, c, z, ...exact] = stored as [number, number, number, ...string[]];
  const sums = { ...emptySums(), n, c, z };
  EXACT_KEYS.forEach((key, index) => (sums[key] = parseExact(exact[index] ?? '0')));
  return sums;
}

/** One stored row of totals: a slice and variant, its units and each metric's sums (formatSums, as JSON). */
export interface TotalsRow {
  slice: string;
  variant_key: string;
  units: number;
  sums: string;
}

/** A stored row (or none) with a cell's difference added: its units and sums after. */
function mergeCell(row: Pick<TotalsRow, 'units' | 'sums'> | undefined, delta: Cell): { units: number; sums: string } {
  const before = row ? (JSON.parse(row.sums) as unknown[][]).map(parseSums) : delta.metrics.map(emptySums);
  const after = before.map((sums, index) => {
    const change = foldSmall(delta.metrics[index] ?? emptySums());
    const merged: Sums = { ...sums, n: sums.n + change.n, c: sums.c + change.c, z: sums.z + change.z };
    for (const exactKey of EXACT_KEYS) merged[exactKey] = exactAdd(sums[exactKey], change[exactKey]);
    return merged;
  });
  return { units: Number(row?.units ?? 0) + delta.units, sums: JSON.stringify(after.map(formatSums)) };
}

/** The rows with the cells' differences added (a row left without units goes): a store that keeps its totals elsewhere (ClickHouse). */
export function mergeCells(rows: readonly TotalsRow[], cells: Cells): TotalsRow[] {
  const merged = new Map(rows.map((row) => [`${row.slice}\u0000${row.variant_key}`, row]));
  for (const [key, delta] of cells) {
    const after = mergeCell(merged.get(key), delta);
    if (after.units === 0) merged.delete(key);
    else merged.set(key, { slice: delta.slice, variant_key: delta.variant, ...after });
  }
  return [...merged.values()];
}

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
  const folds = sliceFolds(plan);
  const add = (rows: readonly Record<string, unknown>[], sign: 1 | -1) => {
    accumulate(cells, plan, rows, sign);
    accumulateKept(cells, folds, rows, sign);
  };
  const before = await touchedRows(executor, seam, experimentId, plan, usable ? fresh : null);
  add(before, -1);
  if (usable) add(freshAfter(before), 1);
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

export function newCells(): Cells {
  return new Map();
}

export { applyCells };

function toTotals(sums: Sums | undefined): MetricTotals {
  if (!sums) return { ...EMPTY_TOTALS };
  return {
    n: sums.n,
    sum: exactToNumber(sums.s),
    sum_of_squares: exactToNumber(sums.q),
    conversions: sums.c,
    sum_y: exactToNumber(sums.sy),
    sum_of_squares_y: exactToNumber(sums.qy),
    sum_xy: exactToNumber(sums.xy),
    nonzero: sums.z,
    pre_sum: exactToNumber(sums.px),
    pre_sum_of_squares: exactToNumber(sums.pxx),
    pre_cross: exactToNumber(sums.pxy),
  };
}

/** The experiment's maintained totals, as the general pass would give them. */
export async function readTotals(executor: Executor, experimentId: string, plan: TotalsPlan): Promise<StoredTotals> {
  const rows = await executor.selectFrom('analysis_rollup_totals').selectAll().where('experiment_id', '=', experimentId).where(ownSlices).execute();
  return totalsOfRows(rows, plan);
}

/** Stored rows of totals as the general pass would give them. */
export function totalsOfRows(rows: ReadonlyArray<Pick<TotalsRow, 'slice' | 'variant_key' | 'units' | 'sums'>>, plan: TotalsPlan): StoredTotals {
  const totals = new Map<string, VariantTotals>();
  const raw: RawTotals[] = plan.breakdowns.map(() => new Map());
  for (const row of rows) {
    const [k, value] = JSON.parse(row.slice) as [number, string | null];
    const sums = (JSON.parse(row.sums) as unknown[][]).map(parseSums);
    const entry: VariantTotals = { variant_key: row.variant_key, units: Number(row.units), metrics: sums.map(toTotals) };
    if (k < 0) {
      totals.set(row.variant_key, entry);
      continue;
    }
    const values = raw[k];
    if (!values) continue;
    const variants = values.get(value) ?? new Map<string, VariantTotals>();
    variants.set(row.variant_key, entry);
    values.set(value, variants);
  }
  const breakdowns = plan.breakdowns.map((key, k) => foldRaw(key, raw[k] ?? new Map(), plan.primary ? 1 : 0));
  return { totals, breakdowns };
}

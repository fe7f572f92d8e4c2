/**
 * The maintained totals' cells as stored (totals.ts keeps them in analysis_rollup_totals, the
 * ClickHouse store in its rollup_state row): the plan's hash, a row's sums as JSON, a cell's
 * difference merged into a row, and stored rows read back as the general pass gives them. Pure,
 * so both stores and the kept slices share it without importing either store.
 */
import { createHash } from 'node:crypto';
import { exactAdd, exactToNumber, formatExact, parseExact } from '../../../../lib/exact-sum.js';
import type { MetricTotals, StoredTotals, TotalsPlan, VariantTotals } from '../../store/contract.js';
import { EMPTY_TOTALS } from '../../store/fold.js';
import { foldRaw, type RawTotals } from '../breakdowns.js';
import { emptySums, EXACT_KEYS, foldSmall, type Cell, type Cells, type Sums } from './contributions.js';

/** Raised when the plan's meaning changes, so stored totals of an older meaning are rebuilt. */
const PLAN_VERSION = 1;

export function planHash(plan: TotalsPlan): string {
  return createHash('sha256')
    .update(JSON.stringify([PLAN_VERSION, plan]))
    .digest('hex')
    .slice(0, 32);
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
export function mergeCell(row: Pick<TotalsRow, 'units' | 'sums'> | undefined, delta: Cell): { units: number; sums: string } {
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

export function newCells(): Cells {
  return new Map();
}

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

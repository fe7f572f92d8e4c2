/**
 * What one unit adds to the maintained totals (sql/rollup/totals.ts): the terms the per-variant SQL
 * (sql/aggregate.ts metricColumns, cuped-totals.ts) adds for it, from the same per-unit values
 * (unit-source.ts), into the cells of its variant and its slices, as exact sums.
 *
 * A refreshed unit that only gains new events is folded by what changes: its row has each value
 * before (m{i}, d{i}, p{i}) and after (am{i}, ad{i}, ap{i}), and only the metrics whose values
 * differ give terms (the old ones taken away, the new ones added). The others' terms would cancel
 * exactly, and so would the unit's count in every cell; new events seldom change more than one or
 * two of a unit's metrics, so this folds a fraction of what taking away and adding everything did.
 */
import { exactAdd, exactNegate, exactOf, exactProduct, ZERO, type Exact } from '../../../../lib/exact-sum.js';
import type { MetricSpec, TotalsPlan } from '../../store/contract.js';
import { toNumber } from '../../store/fold.js';

export interface Sums {
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

export const EXACT_KEYS = ['s', 'q', 'sy', 'qy', 'xy', 'px', 'pxx', 'pxy'] as const;
type ExactKey = (typeof EXACT_KEYS)[number];

const noSmall = (): Record<ExactKey, number> => ({ s: 0, q: 0, sy: 0, qy: 0, xy: 0, px: 0, pxx: 0, pxy: 0 });

export function emptySums(): Sums {
  return { n: 0, c: 0, z: 0, s: ZERO, q: ZERO, sy: ZERO, qy: ZERO, xy: ZERO, px: ZERO, pxx: ZERO, pxy: ZERO, small: noSmall() };
}

/** Moves the integer terms into the exact sums. */
export function foldSmall(sums: Sums): Sums {
  for (const key of EXACT_KEYS) {
    if (sums.small[key] === 0) continue;
    sums[key] = exactAdd(sums[key], exactOf(sums.small[key]));
    sums.small[key] = 0;
  }
  return sums;
}

export interface Cell {
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

/** A metric's columns among the per-unit rows: its value, its denominator's and its covariate's. */
interface Columns {
  m: string;
  d: string;
  p: string;
}

const columnsOf = (index: number, after = ''): Columns => ({ m: `${after}m${index}`, d: `${after}d${index}`, p: `${after}p${index}` });

const valuesAt = (row: Record<string, unknown>, columns: Columns) => ({ m: valueOf(row[columns.m]), d: valueOf(row[columns.d]), p: valueOf(row[columns.p]) });

/** Whether a unit's row has the same values of a metric before and after (raw values: equal ones give equal terms). */
const unchanged = (row: Record<string, unknown>, before: Columns, after: Columns) =>
  row[before.m] === row[after.m] && row[before.d] === row[after.d] && row[before.p] === row[after.p];

interface Breakdown {
  column: string;
  /** Its values' slice keys, made once. */
  slices: Map<string | null, string>;
}

interface FoldOptions {
  /** Goes before each slice's key (a kept metric's slices). */
  prefix?: string;
  /** The columns that hold the primary's values: m0 and d0, or a kept metric's own (m{i}, d{i}). */
  primary?: { m: string; d: string };
  /** As addTerm says. */
  rounded?: boolean;
}

/**
 * One plan's folding of per-unit rows into `cells`: the columns' names and the slices' keys made
 * once, and the cells found by slice, then variant, without building a key per row.
 */
export class PlanFold {
  readonly #metrics: Array<{ spec: MetricSpec; before: Columns; after: Columns }>;
  readonly #primary: { before: Columns; after: Columns };
  readonly #breakdowns: Breakdown[];
  readonly #found = new Map<string, Map<string, Cell>>();
  readonly #main: string;
  readonly #rounded: boolean;

  constructor(
    private readonly cells: Cells,
    private readonly plan: TotalsPlan,
    private readonly options: FoldOptions = {},
  ) {
    this.#metrics = plan.metrics.map((spec, index) => ({ spec, before: columnsOf(index), after: columnsOf(index, 'a') }));
    const { m, d } = options.primary ?? { m: 'm0', d: 'd0' };
    // The slices analyse the primary without its covariate: no p column.
    this.#primary = { before: { m, d, p: '' }, after: { m: `a${m}`, d: `a${d}`, p: '' } };
    this.#breakdowns = plan.breakdowns.map((_, k) => ({ column: `r${k}`, slices: new Map() }));
    this.#main = (options.prefix ?? '') + MAIN_SLICE;
    this.#rounded = options.rounded ?? false;
  }

  #cell(slice: string, variant: string, metricCount: number): Cell {
    let variants = this.#found.get(slice);
    if (!variants) {
      variants = new Map();
      this.#found.set(slice, variants);
    }
    let cell = variants.get(variant);
    if (!cell) {
      cell = cellOf(this.cells, slice, variant, metricCount);
      variants.set(variant, cell);
    }
    return cell;
  }

  /** The cell of breakdown k's value in this row. */
  #sliceCell(k: number, row: Record<string, unknown>, variant: string): Cell {
    const breakdown = this.#breakdowns[k] as Breakdown;
    const raw = row[breakdown.column];
    const value = raw === null || raw === undefined ? null : String(raw);
    let slice = breakdown.slices.get(value);
    if (slice === undefined) {
      slice = (this.options.prefix ?? '') + JSON.stringify([k, value]);
      breakdown.slices.set(value, slice);
    }
    return this.#cell(slice, variant, this.plan.primary ? 1 : 0);
  }

  /** Adds (sign 1) or takes away (sign -1) a unit's whole contribution. */
  add(row: Record<string, unknown>, sign: 1 | -1): void {
    const variant = String(row.variant_key);
    const main = this.#cell(this.#main, variant, this.#metrics.length);
    main.units += sign;
    this.#metrics.forEach(({ spec, before }, index) => addUnit(main.metrics[index] as Sums, spec, valuesAt(row, before), sign, this.#rounded));
    const primary = this.plan.primary;
    for (let k = 0; k < this.#breakdowns.length; k += 1) {
      const cell = this.#sliceCell(k, row, variant);
      cell.units += sign;
      if (primary) addUnit(cell.metrics[0] as Sums, primary, valuesAt(row, this.#primary.before), sign, this.#rounded);
    }
  }

  /** A unit that only gained events (its row has its values after too): the differences of the values that changed. */
  change(row: Record<string, unknown>): void {
    const variant = String(row.variant_key);
    this.#metrics.forEach(({ spec, before, after }, index) => {
      if (unchanged(row, before, after)) return;
      const sums = this.#cell(this.#main, variant, this.#metrics.length).metrics[index] as Sums;
      addUnit(sums, spec, valuesAt(row, before), -1, this.#rounded);
      addUnit(sums, spec, valuesAt(row, after), 1, this.#rounded);
    });
    const primary = this.plan.primary;
    if (!primary || unchanged(row, this.#primary.before, this.#primary.after)) return;
    for (let k = 0; k < this.#breakdowns.length; k += 1) {
      const sums = this.#sliceCell(k, row, variant).metrics[0] as Sums;
      addUnit(sums, primary, valuesAt(row, this.#primary.before), -1, this.#rounded);
      addUnit(sums, primary, valuesAt(row, this.#primary.after), 1, this.#rounded);
    }
  }
}

/** Adds (sign 1) or takes away (sign -1) the contributions of these per-unit rows; `prefix` goes before each slice's key. */
export function accumulate(cells: Cells, plan: TotalsPlan, rows: readonly Record<string, unknown>[], sign: 1 | -1, rounded = false, prefix = ''): void {
  const fold = new PlanFold(cells, plan, { prefix, rounded });
  for (const row of rows) fold.add(row, sign);
}

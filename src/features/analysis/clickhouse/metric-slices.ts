/**
 * The guardrails' and secondary metrics' slices kept with the totals (docs/analysis.md
 * "Incremental analysis in ClickHouse"): per metric of the plan, the cells a breakdown pass of
 * that metric alone would add up (its own values, no covariate), folded from the same per-unit
 * rows as the totals and committed in the same rollup_state row (its `slices`). A snapshot's
 * metric breakdowns then read those cells instead of every unit's rollups, once per metric.
 */
import { PlanFold, type Cells } from '../sql/rollup/contributions.js';
import { mergeCells, newCells, planHash, totalsOfRows, type TotalsRow } from '../sql/rollup/stored-cells.js';
import type { BreakdownKey, BreakdownTotals, MetricSpec, TotalsPlan } from '../store/contract.js';
import { maintainable } from '../store/fold.js';

/** A copy with every object's keys in order (undefined left out), so equal specs hash alike whichever way they were built. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, item]) => [key, canonical(item)]));
}

/** The plan of one metric's slices: no metric of its own, the breakdowns, and the metric as a slice analyses it. */
export function slicePlan(breakdowns: readonly BreakdownKey[], spec: MetricSpec): TotalsPlan {
  const plain = canonical({ ...spec, lookback_ms: null, percentile: null }) as MetricSpec;
  return { metrics: [], breakdowns: [...breakdowns], primary: plain };
}

export interface SliceFold {
  hash: string;
  plan: TotalsPlan;
  /** The metric's columns among the totals' rows (m{i}, d{i}). */
  m: string;
  d: string;
  cells: Cells;
}

/**
 * Whether a metric's slices are kept: maintainable (no percentile cap), and not a ratio, whose
 * slice pass adds the per-unit products x·y in Float64: kept exact sums differ from it in the last
 * bits, and a slice of one unit's zero variance then becomes a tiny one (the incremental random
 * stream found an interval 3e-8 apart).
 */
export function kept(spec: MetricSpec): boolean {
  return maintainable(spec) && spec.denominator === undefined;
}

/** One fold per kept metric of `plan` (a metric listed twice once), when the plan has breakdowns. */
export function sliceFolds(plan: TotalsPlan): SliceFold[] {
  if (plan.breakdowns.length === 0) return [];
  const folds = new Map<string, SliceFold>();
  plan.metrics.forEach((spec, index) => {
    if (!kept(spec)) return;
    const own = slicePlan(plan.breakdowns, spec);
    const hash = planHash(own);
    if (!folds.has(hash)) folds.set(hash, { hash, plan: own, m: `m${index}`, d: `d${index}`, cells: newCells() });
  });
  return [...folds.values()];
}

/**
 * Folds the totals' per-unit rows into each metric's slices, reading the metric's own columns
 * (m{i}, d{i}) as the slices' primary, in place.
 */
export function accumulateSlices(folds: readonly SliceFold[], rows: readonly Record<string, unknown>[], sign: 1 | -1): void {
  if (rows.length === 0) return;
  for (const fold of folds) {
    const planFold = new PlanFold(fold.cells, fold.plan, { rounded: true, primary: { m: fold.m, d: fold.d } });
    for (const row of rows) planFold.add(row, sign);
  }
}

/** The slices to commit (rollup_state.slices): each fold's cells merged into its committed rows (none when `committed` is null). */
export function mergedSlices(folds: readonly SliceFold[], committed: string | null): string {
  const before = committed === null || committed === '' ? {} : (JSON.parse(committed) as Record<string, TotalsRow[]>);
  return JSON.stringify(Object.fromEntries(folds.map((fold) => [fold.hash, mergeCells(before[fold.hash] ?? [], fold.cells)])));
}

/** One metric's breakdowns from committed slices, or null when they hold none for this metric and these breakdowns. */
export function slicesOf(stored: string, breakdowns: readonly BreakdownKey[], metric: MetricSpec): BreakdownTotals[] | null {
  if (stored === '' || !kept(metric)) return null;
  const plan = slicePlan(breakdowns, metric);
  const rows = (JSON.parse(stored) as Record<string, TotalsRow[] | undefined>)[planHash(plan)];
  return rows === undefined ? null : totalsOfRows(rows, plan).breakdowns;
}

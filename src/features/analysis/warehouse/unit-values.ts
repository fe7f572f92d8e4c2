/**
 * Per-variant totals from each unit's counts and sums (an incremental refresh's state plus what it
 * read), by the rules of the SQL store (sql/aggregate.ts): the unit's value per period, the cap,
 * then the sums. Kept per unit because a unit's value is not the sum of its values over time: a
 * capped value, a mean, a binary conversion and every square are taken of the unit's whole history.
 */
import type { MetricTotals, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';
import { PERCENTILE_SCALE } from './statement.js';

/** Rows, rows with a number, and the sum of the numbers of one unit over one period. */
export interface PeriodPart {
  c: number;
  cv: number;
  s: number;
}

/** Periods in the order unit-statement.ts reads them: the window, a ratio's denominator's, the CUPED lookback. */
export const PERIODS = ['m', 'd', 'p'] as const;
export type PeriodName = (typeof PERIODS)[number];
export type UnitParts = Record<PeriodName, PeriodPart>;

export const emptyParts = (): UnitParts => ({ m: { c: 0, cv: 0, s: 0 }, d: { c: 0, cv: 0, s: 0 }, p: { c: 0, cv: 0, s: 0 } });

export function addPart(target: PeriodPart, part: PeriodPart): void {
  target.c += part.c;
  target.cv += part.cv;
  target.s += part.s;
}

/** The unit's value of a period, null where the SQL store has none (a sum or mean without a number). */
function valueOf(metric: WarehouseMetricSpec, part: PeriodPart | undefined): number | null {
  const { c, cv, s } = part ?? { c: 0, cv: 0, s: 0 };
  if (metric.kind === 'binary') return c > 0 ? 1 : 0;
  if (metric.aggregation === 'count' || metric.fact.column === null) return c;
  if (cv === 0) return null;
  return metric.aggregation === 'sum' ? s : s / cv;
}

const capped = (value: number | null, cap: number | null | undefined) => (value !== null && cap !== null && cap !== undefined && value > cap ? cap : value);

function addRatio(totals: MetricTotals, metric: WarehouseMetricSpec, parts: UnitParts | undefined): void {
  const denominator = metric.denominator as WarehouseMetricSpec;
  const x = capped(valueOf(metric, parts?.m), metric.cap) ?? 0;
  const y = capped(valueOf(denominator, parts?.d), denominator.cap) ?? 0;
  totals.n += 1;
  totals.sum += x;
  totals.sum_of_squares += x * x;
  totals.conversions += y !== 0 ? 1 : 0;
  totals.sum_y += y;
  totals.sum_of_squares_y += y * y;
  totals.sum_xy += x * y;
}

function addUnit(totals: MetricTotals, metric: WarehouseMetricSpec, parts: UnitParts | undefined): void {
  if (metric.denominator) return addRatio(totals, metric, parts);
  const mean = metric.aggregation === 'mean' && metric.kind !== 'binary';
  const m = capped(valueOf(metric, parts?.m), metric.cap);
  totals.n += mean && m === null ? 0 : 1;
  if (m !== null) {
    totals.sum += m;
    totals.sum_of_squares += m * m;
    if (metric.kind === 'binary') totals.conversions += m;
    else if (metric.aggregation === 'count') totals.conversions += m > 0 ? 1 : 0;
    else totals.conversions += 1;
    if (metric.percentile && m !== 0) totals.nonzero += 1;
  }
  if (metric.lookback_ms && (!mean || m !== null)) {
    const x = capped(valueOf(metric, parts?.p), metric.cap) ?? 0;
    const y = m ?? 0;
    totals.pre_sum += x;
    totals.pre_sum_of_squares += x * x;
    totals.pre_cross += x * y;
  }
}

/** Per variant, the units exposed and the metric's totals (one entry: index 0). */
export function variantTotalsOf(
  exposures: readonly ShippedExposure[],
  units: ReadonlyMap<string, UnitParts>,
  metric: WarehouseMetricSpec,
): Map<string, VariantTotals> {
  const totals = new Map<string, VariantTotals>();
  for (const exposure of exposures) {
    const entry = totals.get(exposure.variant_key) ?? { variant_key: exposure.variant_key, units: 0, metrics: [{ ...EMPTY_TOTALS }] };
    entry.units += 1;
    addUnit(entry.metrics[0] as MetricTotals, metric, units.get(exposure.unit_id));
    totals.set(exposure.variant_key, entry);
  }
  return totals;
}

/** The quantile of the nonzero uncapped unit values (type 7, as sql/percentile-cap.ts), or null without any. */
export function percentileOfUnits(
  exposures: readonly ShippedExposure[],
  units: ReadonlyMap<string, UnitParts>,
  metric: WarehouseMetricSpec,
  quantile: number,
): number | null {
  const values: number[] = [];
  for (const exposure of exposures) {
    const value = valueOf(metric, units.get(exposure.unit_id)?.m);
    if (value !== null && value !== 0) values.push(value);
  }
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const scaled = Math.round(quantile * PERCENTILE_SCALE);
  const product = (values.length - 1) * scaled;
  const below = (product - (product % PERCENTILE_SCALE)) / PERCENTILE_SCALE;
  const h = product / PERCENTILE_SCALE;
  const lower = values[below] as number;
  const upper = values[below + 1] ?? lower;
  return lower + (h - Math.floor(h)) * (upper - lower);
}

/**
 * What every analysis store folds its rows with: numbers as the drivers return them, per-variant
 * and per-slice rows into totals, and the definition hash of a rollup slot.
 */
import { createHash } from 'node:crypto';
import type { MetricSpec, MetricTotals, PeriodCell, RollupSlot, VariantTotals } from './contract.js';

type Row = Record<string, unknown>;

export const EMPTY_TOTALS: MetricTotals = {
  n: 0,
  sum: 0,
  sum_of_squares: 0,
  conversions: 0,
  sum_y: 0,
  sum_of_squares_y: 0,
  sum_xy: 0,
  nonzero: 0,
  pre_sum: 0,
  pre_sum_of_squares: 0,
  pre_cross: 0,
};

export function toNumber(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number)) throw new Error(`the analysis query returned a non-finite number: ${String(value)}`);
  return number;
}

/** Adds one per-variant aggregate row (columns n0, s0, ... per metric) to the running totals; shared by every store. */
export function addVariantRow(totals: Map<string, VariantTotals>, row: Row, metricCount: number): void {
  const key = String(row.variant_key);
  const entry = totals.get(key) ?? {
    variant_key: key,
    units: 0,
    metrics: Array.from({ length: metricCount }, () => ({ ...EMPTY_TOTALS })),
  };
  entry.units += toNumber(row.units);
  entry.metrics.forEach((metric, index) => {
    metric.n += toNumber(row[`n${index}`]);
    metric.sum += toNumber(row[`s${index}`]);
    metric.sum_of_squares += toNumber(row[`q${index}`]);
    metric.conversions += toNumber(row[`c${index}`]);
    // Absent (undefined) for metrics that are not ratios: toNumber reads it as 0.
    metric.sum_y += toNumber(row[`sy${index}`]);
    metric.sum_of_squares_y += toNumber(row[`qy${index}`]);
    metric.sum_xy += toNumber(row[`xy${index}`]);
    metric.nonzero += toNumber(row[`z${index}`]);
    metric.pre_sum += toNumber(row[`px${index}`]);
    metric.pre_sum_of_squares += toNumber(row[`pxx${index}`]);
    metric.pre_cross += toNumber(row[`pxy${index}`]);
  });
  totals.set(key, entry);
}

/** Adds one per-slice aggregate row (the primary metric's columns n0, s0, ...) to its bucket; shared with the ClickHouse store. */
export function addRow<K>(buckets: Map<K, Map<string, VariantTotals>> | undefined, bucket: K, row: Row, metricCount: number): void {
  if (!buckets) return;
  const variants = buckets.get(bucket) ?? new Map<string, VariantTotals>();
  const key = String(row.variant_key);
  const entry = variants.get(key) ?? { variant_key: key, units: 0, metrics: Array.from({ length: metricCount }, () => ({ ...EMPTY_TOTALS })) };
  entry.units += toNumber(row.units);
  const metric = entry.metrics[0];
  if (metric) {
    metric.n += toNumber(row.n0);
    metric.sum += toNumber(row.s0);
    metric.sum_of_squares += toNumber(row.q0);
    metric.conversions += toNumber(row.c0);
    metric.sum_y += toNumber(row.sy0);
    metric.sum_of_squares_y += toNumber(row.qy0);
    metric.sum_xy += toNumber(row.xy0);
  }
  variants.set(key, entry);
  buckets.set(bucket, variants);
}

/**
 * The definition hash of a metric's rows: everything that decides which events they count and
 * their numbers, and the stop. Capping and direction apply when rows are aggregated: not in it.
 */
export function slotHash(slot: RollupSlot, stoppedAt: number | null): string {
  const defined = [slot.event_key, slot.value_keys, slot.window_ms, slot.lookback_ms, stoppedAt];
  return createHash('sha256').update(JSON.stringify(defined)).digest('hex').slice(0, 32);
}

/** A metric whose capped sums can be maintained: no percentile cap, which moves at every snapshot. */
export function maintainable(spec: MetricSpec): boolean {
  return !spec.percentile && !spec.denominator?.percentile;
}

/** A period row (columns period, variant_key, units, n0, s0, q0) as a cell. */
export function periodCellOf(row: Row): PeriodCell {
  return {
    period: toNumber(row.period),
    variant_key: String(row.variant_key),
    units: toNumber(row.units),
    n: toNumber(row.n0),
    sum: toNumber(row.s0),
    sumOfSquares: toNumber(row.q0),
  };
}

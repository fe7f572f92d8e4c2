/**
 * A metric read from a fact table on a warehouse source (docs/warehouse.md): the analysis store
 * contract's MetricSpec with where its rows come from instead of an event key and property path.
 */
import type { MetricSpec } from '../store/contract.js';

export interface FactSource {
  /** The fact table's SQL, one read-only SELECT (checked when it was saved). */
  sql: string;
  unit_id_column: string;
  timestamp_column: string;
  /** The column summed or averaged (sum and mean); null counts rows (binary, count). */
  column: string | null;
  /** A boolean SQL expression over the fact table's columns that keeps the rows counted, or null for all. */
  filter: string | null;
}

/**
 * One metric as the source computes it: its kind, window and cap; a ratio's denominator (on the
 * same source); the CUPED lookback; and a pending percentile cap (the statement then counts the
 * nonzero values, and the cap comes from the units' values, unit-values.ts).
 */
export type WarehouseMetricSpec = Pick<MetricSpec, 'kind' | 'aggregation' | 'window_ms' | 'cap'> & {
  fact: FactSource;
  denominator?: WarehouseMetricSpec | undefined;
  lookback_ms?: number | null | undefined;
  percentile?: number | null | undefined;
};

/** One live exposure of the experiment: what is shipped to the source. */
export interface ShippedExposure {
  unit_id: string;
  variant_key: string;
  /** Epoch milliseconds. */
  exposed_at: number;
}

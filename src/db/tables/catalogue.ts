export type MetricKind = 'binary' | 'count' | 'revenue' | 'duration' | 'ratio' | 'quantile';
export type QuantileLevel = 'event' | 'unit';
export type MetricAggregation = 'sum' | 'mean' | 'count';

export interface MetricsTable {
  id: string;
  workspace_id: string;
  key: string;
  name: string;
  event_key: string;
  kind: MetricKind;
  aggregation: MetricAggregation;
  /** As given (ISO 8601 duration), for display. */
  unit_dedup_window: string;
  /** The same window in milliseconds, for SQL window arithmetic. */
  unit_dedup_window_ms: number;
  property_path: string | null;
  description: string | null;
  /** 1 when a higher value is better (the default), 0 when lower is better. */
  higher_is_better: number;
  /** MetricCapping as JSON text, or null. */
  capping: string | null;
  /** Ratio metrics only: the numerator's and denominator's metric ids. */
  numerator_metric_id: string | null;
  denominator_metric_id: string | null;
  /** The display unit of the metric's values ("ms", "USD"), or null. */
  unit: string | null;
  /** Quantile metrics only: q (0 < q < 1) and the values it is taken over; null otherwise. */
  quantile: number | null;
  quantile_level: QuantileLevel | null;
  created_at: number;
  updated_at: number;
}

export interface SegmentsTable {
  id: string;
  workspace_id: string;
  key: string;
  name: string;
  description: string | null;
  /** AudienceExpression as JSON text. */
  rule: string;
  created_at: number;
  updated_at: number;
}

export interface MutexGroupsTable {
  id: string;
  workspace_id: string;
  key: string;
  name: string;
  created_at: number;
}

export interface CatalogueTables {
  metrics: MetricsTable;
  segments: SegmentsTable;
  mutex_groups: MutexGroupsTable;
}

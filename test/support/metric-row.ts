/** A metric as the analysis reads it, for the pure tests of this slice: the fields a test names, the usual defaults for the rest. */
import type { MetricRow } from '../../src/features/metrics/read.js';

const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

export function metricRow(fields: Pick<MetricRow, 'id' | 'key' | 'name' | 'kind' | 'aggregation'> & Partial<MetricRow>): MetricRow {
  return {
    workspace_id: 'w',
    event_key: 'buy',
    unit_dedup_window: 'P7D',
    unit_dedup_window_ms: WEEK_MS,
    property_path: null,
    description: null,
    higher_is_better: 1,
    capping: null,
    numerator_metric_id: null,
    denominator_metric_id: null,
    unit: null,
    quantile: null,
    quantile_level: null,
    created_at: 0,
    updated_at: 0,
    ...fields,
  };
}

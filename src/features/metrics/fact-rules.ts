/**
 * The rules of a metric on a fact table (docs/warehouse.md) that need no database: it names a
 * fact table instead of an event key, a column instead of a property_path (for sum and mean
 * only), and optionally a row filter. Whether the fact table, column and filter fit is checked
 * against the fact table itself when the metric is saved (data-sources' factMetricErrors).
 */
import type { FieldError } from '../../http/problems.js';
import type { MetricRow } from './read.js';
import type { MetricInput } from './schemas.js';

/** What a ratio or an events metric may not carry: the fields of a metric on a fact table. */
export function factFieldsRefused(input: MetricInput, why: string): FieldError[] {
  return (['fact_table_id', 'column', 'filter'] as const).flatMap((field) =>
    input[field] === undefined || input[field] === null ? [] : [{ pointer: `/${field}`, message: why }],
  );
}

/** The fields naming what a metric on a fact table reads: no event key, property path or ratio components beside it. */
export function factSourceErrors(input: MetricInput): FieldError[] {
  const errors: FieldError[] = [];
  if (input.event_key !== undefined)
    errors.push({ pointer: '/fact_table_id', message: 'give either event_key (a metric on events) or fact_table_id (a metric on a fact table), not both' });
  if (input.property_path !== undefined && input.property_path !== null)
    errors.push({ pointer: '/property_path', message: 'a metric on a fact table reads a column: name it in column instead of property_path' });
  for (const field of ['numerator_metric_id', 'denominator_metric_id'] as const) {
    if (input[field] !== undefined) errors.push({ pointer: `/${field}`, message: 'only a ratio metric has a numerator and a denominator' });
  }
  return errors;
}

/** The column rule, as property_path's for events: sum and mean need one, count takes none. */
export function factColumnProblem(aggregation: MetricRow['aggregation'], column: string | null): string | null {
  if (aggregation === 'count') return column === null ? null : 'count counts rows; remove column or aggregate with sum or mean';
  return column === null ? `${aggregation} aggregates a number from each row; name the column holding it` : null;
}

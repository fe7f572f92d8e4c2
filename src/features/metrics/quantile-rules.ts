/**
 * The rules of quantile metrics (docs/metrics.md "Quantile metrics"):
 * - a quantile metric names q strictly between 0 and 1 (the median is 0.5; 0 and 1 are the
 *   minimum and maximum, which have no interval);
 * - it is taken over numbers, so it needs property_path and sums or averages (its aggregation
 *   says how a unit's numbers become the unit's one value at the unit level);
 * - the level defaults to event (every event's number, the units as clusters);
 * - other kinds take neither field, which would otherwise be ignored without a word.
 */
import type { FieldError } from '../../http/problems.js';
import type { QuantileLevel } from '../../db/tables/catalogue.js';
import type { MetricInput } from './schemas.js';

export interface ResolvedQuantile {
  quantile: number | null;
  quantile_level: QuantileLevel | null;
}

export function resolveQuantile(input: MetricInput): { resolved: ResolvedQuantile; errors: FieldError[] } {
  if (input.kind !== 'quantile') {
    const errors = (['quantile', 'quantile_level'] as const)
      .filter((field) => input[field] !== undefined)
      .map((field) => ({ pointer: `/${field}`, message: `only a quantile metric takes ${field}` }));
    return { resolved: { quantile: null, quantile_level: null }, errors };
  }
  const errors: FieldError[] = [];
  const quantile = input.quantile;
  if (quantile === undefined) errors.push({ pointer: '/quantile', message: 'a quantile metric needs its quantile, e.g. 0.9 for p90' });
  else if (!(Number.isFinite(quantile) && quantile > 0 && quantile < 1)) {
    errors.push({ pointer: '/quantile', message: 'the quantile must lie strictly between 0 and 1 (e.g. 0.5 for the median, 0.99 for p99)' });
  }
  return { resolved: { quantile: quantile ?? null, quantile_level: input.quantile_level ?? 'event' }, errors };
}

/**
 * A quantile metric's values, as the store returns them, to each variant's estimate
 * (docs/metrics.md "Quantile metrics"). Pure, so the build can run in the stats thread.
 * - unit level: a unit without a number has the value 0 under sum (as a sum metric's unit does)
 *   and none under mean (as a mean metric's unit has no mean);
 * - capping as for other metrics, on the values the quantile is taken over: an absolute cap
 *   holds each to min(value, cap); a percentile cap is that quantile of the experiment's nonzero
 *   values (all variants), recomputed at each snapshot;
 * - event level: the units are the clusters of the delta method; unit level: each value is one unit.
 */
import type { MetricAggregation, QuantileLevel } from '../../../db/tables/catalogue.js';
import { quantileEstimate, sampleQuantile, type QuantileEstimate } from '../../../stats/quantile.js';
import type { MetricCapping } from '../../metrics/schemas.js';
import type { QuantileRow } from '../store/contract.js';

export interface QuantileDefinition {
  quantile: number;
  level: QuantileLevel;
  aggregation: MetricAggregation;
  capping: MetricCapping | null;
}

export interface QuantileArms {
  /** By variant key. */
  estimates: Record<string, QuantileEstimate>;
  /** The cap the values were held to, or null. */
  cap: number | null;
}

function capOf(values: readonly number[], capping: MetricCapping | null): number | null {
  if (capping === null) return null;
  if (capping.type === 'absolute') return capping.value;
  const nonzero = Float64Array.from(values.filter((value) => value !== 0)).sort();
  return nonzero.length === 0 ? null : sampleQuantile(nonzero, capping.value);
}

export function quantileArms(rows: readonly QuantileRow[], definition: QuantileDefinition): QuantileArms {
  const kept = rows.flatMap((row) => {
    if (row.value !== null) return [{ ...row, value: row.value }];
    return definition.level === 'unit' && definition.aggregation === 'sum' ? [{ ...row, value: 0 }] : [];
  });
  const cap = capOf(
    kept.map((row) => row.value),
    definition.capping,
  );
  const byVariant = new Map<string, { values: number[]; units: string[] }>();
  for (const row of kept) {
    const arm = byVariant.get(row.variant_key) ?? { values: [], units: [] };
    arm.values.push(cap === null ? row.value : Math.min(row.value, cap));
    arm.units.push(row.unit_id);
    byVariant.set(row.variant_key, arm);
  }
  const estimates: Record<string, QuantileEstimate> = {};
  for (const [key, arm] of byVariant) {
    estimates[key] = quantileEstimate(definition.level === 'event' ? arm : { values: arm.values }, definition.quantile);
  }
  return { estimates, cap };
}

/**
 * Which rollup rows an experiment needs (docs/analysis.md "Incremental analysis"): one slot per
 * metric whose per-unit values it analyses — the primary metric and guardrails, and for a ratio
 * its numerator and denominator — with the CUPED lookback for every metric but a ratio's parts
 * when the experiment uses CUPED. A metric used both ways keeps the lookback (its rows are then a
 * superset of what either use needs).
 */
import { parsePropertyPath } from '../../metrics/property-path.js';
import type { MetricRow } from '../../metrics/read.js';
import type { RollupSlot } from './contract.js';

function slotOf(metric: MetricRow, lookbackMs: number): RollupSlot {
  const reads = metric.aggregation !== 'count' && metric.property_path !== null;
  return {
    metric_id: metric.id,
    event_key: metric.event_key,
    value_keys: reads ? parsePropertyPath(metric.property_path as string) : null,
    window_ms: metric.unit_dedup_window_ms,
    lookback_ms: lookbackMs,
  };
}

export function rollupSlots(analysed: readonly MetricRow[], components: ReadonlyMap<string, MetricRow>, lookbackMs: number | null): RollupSlot[] {
  const slots = new Map<string, RollupSlot>();
  const add = (slot: RollupSlot) => {
    const known = slots.get(slot.metric_id);
    if (!known || known.lookback_ms < slot.lookback_ms) slots.set(slot.metric_id, slot);
  };
  for (const metric of analysed) {
    if (metric.kind !== 'ratio') {
      add(slotOf(metric, lookbackMs ?? 0));
      continue;
    }
    for (const id of [metric.numerator_metric_id, metric.denominator_metric_id]) {
      const component = components.get(id ?? '');
      if (component) add(slotOf(component, 0));
    }
  }
  return [...slots.values()];
}

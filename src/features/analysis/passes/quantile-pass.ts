/**
 * The quantile metrics of a snapshot (docs/metrics.md "Quantile metrics"): each one's values read
 * through the store's view (the same events as every other read of the snapshot), then each
 * variant's quantile and interval (compute/quantile-arms.ts). The general pass still gives such a
 * metric's units and conversions; its quantile replaces the mean in the build.
 */
import type { ExperimentRow } from '../../experiments/read.js';
import { cappingOf, type MetricRow } from '../../metrics/read.js';
import { quantileArms, type QuantileArms } from '../compute/quantile-arms.js';
import type { ViewDeps } from '../deps.js';
import { eventMetricSpec } from './metric-totals.js';

export interface QuantilePass {
  /** By metric index (the snapshot's order), null for the other kinds. */
  arms: (QuantileArms | null)[];
  eventsRead: number;
}

export async function quantilePass(ctx: ViewDeps, row: ExperimentRow, metrics: readonly MetricRow[]): Promise<QuantilePass> {
  const scope = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at };
  const arms: (QuantileArms | null)[] = [];
  let eventsRead = 0;
  for (const metric of metrics) {
    if (metric.kind !== 'quantile') {
      arms.push(null);
      continue;
    }
    const level = metric.quantile_level ?? 'event';
    const values = await ctx.view.quantileValues(scope, eventMetricSpec(metric, null), level);
    eventsRead += values.eventsRead;
    const definition = { quantile: metric.quantile ?? 0.5, level, aggregation: metric.aggregation, capping: cappingOf(metric) };
    arms.push(quantileArms(values.rows, definition));
  }
  return { arms, eventsRead };
}

/**
 * The snapshot's caps, events read and quantile estimates once its quantile metrics are read: a
 * quantile metric's cap is the one its quantile's values were held to.
 */
export async function withQuantiles<T extends { capsApplied: readonly (number | null)[]; eventsRead: number }>(
  ctx: ViewDeps,
  row: ExperimentRow,
  metrics: readonly MetricRow[],
  computed: T,
) {
  const pass = await quantilePass(ctx, row, metrics);
  return {
    ...computed,
    capsApplied: computed.capsApplied.map((cap, index) => (pass.arms[index] ? (pass.arms[index]?.cap ?? null) : cap)),
    eventsRead: computed.eventsRead + pass.eventsRead,
    quantiles: pass.arms.map((arm) => arm?.estimates ?? null),
  };
}

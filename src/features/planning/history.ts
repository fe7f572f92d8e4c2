/**
 * The history a plan reads through the analysis store (store/contract.ts, HistoryInput): each metric's baseline
 * over the units seen in the last `days` days of the environment, and the traffic, units seen per
 * day. Percentile caps are not applied to history (their cap is the quantile of an experiment's
 * own values); absolute caps are.
 */
import { isSequenceKind, perUnitKind } from '../metrics/sequence-rules.js';
import { findMetricsByIds, type MetricRow } from '../metrics/read.js';
import { planSpec } from '../analysis/passes/metric-totals.js';
import type { HistoryTotals } from '../analysis/store/contract.js';
import { baselineFromHistory, type HistoryBaseline } from '../../stats/history-baseline.js';
import type { PlanningDeps } from './deps.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface HistoryScope {
  workspaceId: string;
  environmentId: string;
  from: number;
  to: number;
  /** CUPED's lookback in milliseconds, or null without variance reduction. */
  lookbackMs: number | null;
}

export interface MetricHistory {
  baseline: HistoryBaseline | null;
  units: number;
  events: number;
}

export interface History {
  /** Distinct units seen in the period. */
  units: number;
  /** By metric, in the order given. */
  metrics: MetricHistory[];
}

/** The numerators and denominators of the ratio metrics, by id. */
async function componentsOf(ctx: PlanningDeps, workspaceId: string, metrics: readonly MetricRow[]): Promise<Map<string, MetricRow>> {
  const ids = metrics.flatMap((metric) => [metric.numerator_metric_id, metric.denominator_metric_id].filter((id): id is string => id !== null));
  return new Map((await findMetricsByIds(ctx.db, workspaceId, ids)).map((metric) => [metric.id, metric]));
}

/** The metrics' history, or null from a store that does not read history. Ratios whose component is gone have no baseline. */
export async function readHistory(ctx: PlanningDeps, scope: HistoryScope, metrics: readonly MetricRow[]): Promise<History | null> {
  const components = await componentsOf(ctx, scope.workspaceId, metrics);
  // A funnel or retention metric has no history: its steps and windows are not what the store's history reads.
  const complete = (metric: MetricRow) =>
    !isSequenceKind(metric.kind) &&
    (metric.kind !== 'ratio' || (components.has(metric.numerator_metric_id ?? '') && components.has(metric.denominator_metric_id ?? '')));
  const usable = metrics.filter(complete);
  const specs = usable.map((metric) => {
    const spec = planSpec(metric, components, metric.kind === 'ratio' ? null : scope.lookbackMs);
    const withoutPercentile = { ...spec, percentile: null };
    return spec.denominator ? { ...withoutPercentile, denominator: { ...spec.denominator, percentile: null } } : withoutPercentile;
  });
  const totals: HistoryTotals | null = await ctx.analysisStore.historyTotals({ ...scope, metrics: specs });
  if (totals === null) return null;
  let next = 0;
  return {
    units: totals.units,
    metrics: metrics.map((metric) => {
      if (!complete(metric)) return { baseline: null, units: totals.units, events: 0 };
      const index = next++;
      const sums = totals.metrics[index];
      const events = totals.events[index] ?? 0;
      const cuped = scope.lookbackMs !== null && metric.kind !== 'ratio';
      // A quantile has no per-unit mean and variance to plan with.
      const baseline = sums && metric.kind !== 'quantile' ? baselineFromHistory(perUnitKind(metric.kind), sums, cuped) : null;
      return { baseline, units: sums?.n ?? 0, events };
    }),
  };
}

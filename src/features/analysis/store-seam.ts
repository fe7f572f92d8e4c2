/**
 * Where a computation's sums come from (docs/architecture.md "The analysis store seam"): the
 * primary database's SQL (aggregate-store.ts and its neighbours, on SQLite or PostgreSQL) or
 * ClickHouse (clickhouse-store.ts) when VERDICT_CLICKHOUSE_URL is set. Each function returns the
 * same shape from either, so caps, CUPED, the build and the recommendation never ask which.
 */
import { committedDrain } from '../../clickhouse/events.js';
import { aggregateByVariant } from './sql/aggregate.js';
import { breakdownsInClickHouse } from './clickhouse/breakdowns.js';
import { aggregateInClickHouse, lateEventsInClickHouse, percentileCapInClickHouse } from './clickhouse/aggregate.js';
import { aggregateBreakdowns } from './sql/breakdowns.js';
import type { AnalysisDeps } from './index.js';
import { countLateEvents } from './sql/late-events.js';
import { percentileCap } from './sql/percentile-cap.js';
import type { Aggregation, AggregationInput, BreakdownInput, BreakdownTotals, CapScope, LateEvents, LateEventScope, MetricSpec } from './store/contract.js';

/** Where a snapshot was computed (its `computation.store`). */
export type ComputationStore = 'sqlite' | 'postgres' | 'clickhouse';

export function computationStoreOf(ctx: Pick<AnalysisDeps, 'seam' | 'clickhouse'>): ComputationStore {
  return ctx.clickhouse ? 'clickhouse' : ctx.seam.name;
}

export async function aggregateIn(
  ctx: AnalysisDeps,
  input: AggregationInput,
  topLimit: (quantile: number, units: number) => number = () => 0,
): Promise<Aggregation> {
  if (ctx.clickhouse) return aggregateInClickHouse(ctx.clickhouse, { ...input, drained: await committedDrain(ctx.db) }, topLimit);
  return aggregateByVariant(ctx.db, ctx.seam, ctx.reads, input, topLimit);
}

export async function percentileCapIn(ctx: AnalysisDeps, scope: CapScope, metric: MetricSpec, quantile: number): Promise<number | null> {
  if (ctx.clickhouse) return percentileCapInClickHouse(ctx.clickhouse, { ...scope, drained: await committedDrain(ctx.db) }, metric, quantile);
  return percentileCap(ctx.db, ctx.seam, ctx.reads, scope, metric, quantile);
}

export async function lateEventsIn(ctx: AnalysisDeps, scope: LateEventScope, metrics: readonly MetricSpec[]): Promise<LateEvents> {
  if (ctx.clickhouse) return lateEventsInClickHouse(ctx.clickhouse, { ...scope, drained: await committedDrain(ctx.db) }, metrics);
  return countLateEvents(ctx.db, scope, metrics);
}

export async function breakdownsIn(ctx: AnalysisDeps, input: BreakdownInput): Promise<BreakdownTotals[]> {
  if (ctx.clickhouse) return breakdownsInClickHouse(ctx.clickhouse, { ...input, drained: await committedDrain(ctx.db) });
  return aggregateBreakdowns(ctx.db, ctx.seam, ctx.reads, input);
}

/**
 * The warehouse source as one more implementation of the analysis store's reads (store/contract.ts
 * StoreView): a snapshot whose metrics read fact tables gets this view around its store's. Each
 * metric on a fact table is computed on that table's source (aggregate.ts), the experiment's live
 * exposures shipped with the statement; every other metric, the units and the rest of the reads
 * come from the store as before, and the totals are put back in the metrics' order.
 */
import { problems } from '../../../http/problems.js';
import { openFactTable, SourceError, withSource, type FactReaderDeps, type OpenedFactTable } from '../../data-sources/read.js';
import type { MetricRow } from '../../metrics/read.js';
import type { Aggregation, AggregationInput, CapScope, MetricSpec, StoreView, TopLimit, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';
import { aggregateOnSource, percentileOnSource } from './aggregate.js';
import { liveExposures } from './exposures.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';

/** Whether the metric (or a ratio's denominator) reads a fact table. */
export function readsFacts(spec: Pick<MetricSpec, 'fact' | 'denominator'>): boolean {
  return Boolean(spec.fact ?? spec.denominator?.fact);
}

/** Whether any metric, or a ratio's component, reads a fact table: the snapshot then reads through warehouseView. */
export function readFactTables(metrics: readonly MetricRow[], components: ReadonlyMap<string, MetricRow>): boolean {
  return [...metrics, ...components.values()].some((metric) => metric.fact_table_id !== null);
}

/** A source's failure during a snapshot: 504 past the timeout, 502 otherwise (the statement is Verdict's, not the caller's). */
function problemOf(error: unknown): unknown {
  if (!(error instanceof SourceError)) return error;
  if (error.reason === 'timeout') return problems.dataSourceTimeout(error.message);
  return problems.dataSourceUnreachable(`the data source could not compute a metric on a fact table: ${error.message}`);
}

interface Scope {
  workspaceId: string;
  experimentId: string;
}

export function warehouseView(inner: StoreView, ctx: FactReaderDeps, scope: Scope): StoreView {
  let shipped: Promise<ShippedExposure[]> | null = null;
  const exposures = () => (shipped ??= liveExposures(ctx.db, scope.workspaceId, scope.experimentId));
  const tables = new Map<string, Promise<OpenedFactTable>>();
  const open = (id: string) => {
    const found = tables.get(id) ?? openFactTable(ctx, ctx.db, scope.workspaceId, id).then((table) => {
      if (!table) throw problems.metricNotComputable(`a metric reads fact table ${id}, which is gone`);
      return table;
    });
    tables.set(id, found);
    return found;
  };

  /** The spec as the source computes it, and the fact table it reads (a ratio's denominator on the same source). */
  async function onSource(spec: MetricSpec): Promise<{ table: OpenedFactTable; spec: WarehouseMetricSpec }> {
    const of = async (item: MetricSpec): Promise<{ table: OpenedFactTable; spec: WarehouseMetricSpec }> => {
      if (!item.fact) throw problems.metricNotComputable('a ratio reads one component from events and the other from a fact table: both must read the same source');
      const table = await open(item.fact.fact_table_id);
      const fact = { sql: table.sql, unit_id_column: table.unit_id_column, timestamp_column: table.timestamp_column, column: item.fact.column, filter: item.fact.filter };
      return { table, spec: { kind: item.kind, aggregation: item.aggregation, window_ms: item.window_ms, cap: item.cap, fact, lookback_ms: item.lookback_ms, percentile: item.percentile } };
    };
    const numerator = await of(spec);
    if (!spec.denominator) return numerator;
    const denominator = await of(spec.denominator);
    if (denominator.table.data_source_id !== numerator.table.data_source_id)
      throw problems.metricNotComputable('a ratio’s numerator and denominator read fact tables on different data sources');
    return { table: numerator.table, spec: { ...numerator.spec, denominator: denominator.spec } };
  }

  async function run<T>(table: OpenedFactTable, work: Parameters<typeof withSource<T>>[3]): Promise<T> {
    try {
      return await withSource(table.kind, table.url, table.limits, work);
    } catch (error) {
      throw problemOf(error);
    }
  }

  async function aggregate(input: AggregationInput, topLimit?: TopLimit): Promise<Aggregation> {
    const onFacts = input.metrics.flatMap((metric, index) => (readsFacts(metric) ? [index] : []));
    if (onFacts.length === 0) return inner.aggregate(input, topLimit);
    const onEvents = input.metrics.flatMap((metric, index) => (readsFacts(metric) ? [] : [index]));
    const fromStore = await inner.aggregate({ ...input, metrics: onEvents.map((index) => input.metrics[index] as MetricSpec) }, topLimit);
    const totals = new Map<string, VariantTotals>();
    const entry = (key: string, units: number) => {
      const found = totals.get(key) ?? { variant_key: key, units, metrics: input.metrics.map(() => ({ ...EMPTY_TOTALS })) };
      totals.set(key, found);
      return found;
    };
    for (const [key, variant] of fromStore.totals) {
      const target = entry(key, variant.units);
      onEvents.forEach((index, at) => (target.metrics[index] = variant.metrics[at] ?? { ...EMPTY_TOTALS }));
    }
    let eventsRead = fromStore.eventsRead;
    // One session per source, one statement per metric.
    const resolved = await Promise.all(onFacts.map(async (index) => ({ index, ...(await onSource(input.metrics[index] as MetricSpec)) })));
    const bySource = new Map<string, typeof resolved>();
    for (const item of resolved) bySource.set(item.table.data_source_id, [...(bySource.get(item.table.data_source_id) ?? []), item]);
    for (const group of bySource.values()) {
      const table = (group[0] as (typeof group)[number]).table;
      const shippedRows = await exposures();
      const result = await run(table, (session) =>
        aggregateOnSource(table.kind, session, shippedRows, group.map((item) => item.spec), input.eventsBefore),
      );
      eventsRead += result.rowsCounted;
      for (const [key, variant] of result.totals) {
        const target = entry(key, variant.units);
        group.forEach((item, at) => (target.metrics[item.index] = variant.metrics[at] ?? { ...EMPTY_TOTALS }));
      }
    }
    const tops = new Map([...fromStore.tops].map(([index, lists]) => [onEvents[index] as number, lists]));
    return { totals, tops, eventsRead };
  }

  return {
    refresh: (row, slots, options) => inner.refresh(row, slots, options),
    aggregate,
    async percentileCap(capScope: CapScope, metric: MetricSpec, quantile: number) {
      if (!readsFacts(metric)) return inner.percentileCap(capScope, metric, quantile);
      const { table, spec } = await onSource({ ...metric, denominator: undefined });
      const shippedRows = await exposures();
      return run(table, (session) => percentileOnSource(table.kind, session, shippedRows, spec, capScope.eventsBefore, quantile));
    },
    lateEvents: (lateScope, metrics) => inner.lateEvents(lateScope, metrics.filter((metric) => !readsFacts(metric))),
    // Slices of a primary metric on a fact table are not computed on the source yet: the snapshot has none.
    breakdowns: async (input) => (input.primary && readsFacts(input.primary) ? [] : inner.breakdowns(input)),
    async periodCells(cellScope, spec, starts) {
      if (readsFacts(spec)) throw problems.metricNotComputable('a bandit’s primary metric must read events: a metric on a fact table cannot steer its weights yet');
      return inner.periodCells(cellScope, spec, starts);
    },
    maintainedTotals: (experimentId, plan) => inner.maintainedTotals(experimentId, plan),
  };
}

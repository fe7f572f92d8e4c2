/**
 * The warehouse source as one more implementation of the analysis store's reads (store/contract.ts
 * StoreView): a snapshot whose metrics read fact tables gets this view around its store's. Each
 * metric on a fact table is computed on that table's source (aggregate.ts), the experiment's live
 * exposures shipped with the statement; every other metric, the units and the rest of the reads
 * come from the store as before, and the totals are put back in the metrics' order.
 */
import { problems } from '../../../http/problems.js';
import { openFactTable, SourceError, withSource, type FactReaderDeps, type OpenedFactTable, type SourceSession } from '../../data-sources/read.js';
import type { ExperimentRow } from '../../experiments/read.js';
import type { MetricRow } from '../../metrics/read.js';
import type { AnalysisDeps } from '../deps.js';
import type { Aggregation, AggregationInput, CapScope, ComputationMode, MetricSpec, StoreView, TopLimit, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';
import { liveExposures } from './exposures.js';
import { unitRefresher, type UnitRefresher, type WarehouseRefreshReport } from './incremental.js';
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

interface FactReads {
  exposures(): Promise<ShippedExposure[]>;
  refresher: UnitRefresher;
  onSource(spec: MetricSpec): Promise<{ table: OpenedFactTable; spec: WarehouseMetricSpec }>;
  run<T>(table: OpenedFactTable, work: (session: SourceSession) => Promise<T>): Promise<T>;
}

/** The snapshot's exposures (read once) and fact tables (opened once), and statements run with a source's failures as problems. */
function factReads(ctx: WarehouseDeps, scope: Scope, mode: ComputationMode): FactReads {
  let shipped: Promise<ShippedExposure[]> | null = null;
  const exposures = () => (shipped ??= liveExposures(ctx.db, scope.workspaceId, scope.experimentId));
  const tables = new Map<string, Promise<OpenedFactTable>>();
  const open = (id: string) => {
    const found =
      tables.get(id) ??
      openFactTable(ctx, ctx.db, scope.workspaceId, id).then((table) => {
        if (!table) throw problems.metricNotComputable(`a metric reads fact table ${id}, which is gone`);
        return table;
      });
    tables.set(id, found);
    return found;
  };
  const of = async (item: MetricSpec): Promise<{ table: OpenedFactTable; spec: WarehouseMetricSpec }> => {
    if (!item.fact)
      throw problems.metricNotComputable('a ratio reads one component from events and the other from a fact table: both must read the same source');
    const table = await open(item.fact.fact_table_id);
    const { sql, unit_id_column, timestamp_column } = table;
    const fact = { sql, unit_id_column, timestamp_column, column: item.fact.column, filter: item.fact.filter };
    const { kind, aggregation, window_ms, cap, lookback_ms, percentile } = item;
    return { table, spec: { kind, aggregation, window_ms, cap, fact, lookback_ms, percentile } };
  };
  return {
    exposures,
    refresher: unitRefresher(ctx, scope, mode, exposures),
    // A ratio's denominator is computed in its numerator's statement: on the same source.
    async onSource(spec) {
      const numerator = await of(spec);
      if (!spec.denominator) return numerator;
      const denominator = await of(spec.denominator);
      if (denominator.table.data_source_id !== numerator.table.data_source_id)
        throw problems.metricNotComputable('a ratio’s numerator and denominator read fact tables on different data sources');
      return { table: numerator.table, spec: { ...numerator.spec, denominator: denominator.spec } };
    },
    async run(table, work) {
      try {
        return await withSource(table.kind, table.url, table.limits, work);
      } catch (error) {
        throw problemOf(error);
      }
    },
  };
}

/** The store's totals of the metrics on events and the sources' of those on fact tables, in the metrics' order. */
async function aggregateBoth(inner: StoreView, reads: FactReads, input: AggregationInput, topLimit?: TopLimit): Promise<Aggregation> {
  const onFacts = input.metrics.flatMap((metric, index) => (readsFacts(metric) ? [index] : []));
  const onEvents = input.metrics.flatMap((metric, index) => (readsFacts(metric) ? [] : [index]));
  const fromStore = await inner.aggregate({ ...input, metrics: onEvents.map((index) => input.metrics[index] as MetricSpec) }, topLimit);
  const totals = new Map<string, VariantTotals>();
  const place = (key: string, units: number, indexes: readonly number[], metrics: VariantTotals['metrics']) => {
    const target = totals.get(key) ?? { variant_key: key, units, metrics: input.metrics.map(() => ({ ...EMPTY_TOTALS })) };
    indexes.forEach((index, at) => (target.metrics[index] = metrics[at] ?? { ...EMPTY_TOTALS }));
    totals.set(key, target);
  };
  for (const [key, variant] of fromStore.totals) place(key, variant.units, onEvents, variant.metrics);
  let eventsRead = fromStore.eventsRead;
  const resolved = await Promise.all(onFacts.map(async (index) => ({ index, ...(await reads.onSource(input.metrics[index] as MetricSpec)) })));
  // One session per source, one statement per metric.
  const bySource = new Map<string, typeof resolved>();
  for (const item of resolved) bySource.set(item.table.data_source_id, [...(bySource.get(item.table.data_source_id) ?? []), item]);
  for (const group of bySource.values()) {
    const table = (group[0] as (typeof group)[number]).table;
    const before = reads.refresher.report.rows_read;
    await reads.run(table, async (session) => {
      for (const item of group) {
        const variants = await reads.refresher.totals(table, session, item.spec, input.eventsBefore);
        for (const [key, variant] of variants) place(key, variant.units, [item.index], variant.metrics);
      }
    });
    eventsRead += reads.refresher.report.rows_read - before;
  }
  const tops = new Map([...fromStore.tops].map(([index, lists]) => [onEvents[index] as number, lists]));
  return { totals, tops, eventsRead };
}

type WarehouseDeps = FactReaderDeps & Pick<AnalysisDeps, 'clock'>;

export function warehouseView(inner: StoreView, ctx: WarehouseDeps, scope: Scope, mode: ComputationMode, reads = factReads(ctx, scope, mode)): StoreView {
  return {
    refresh: (row, slots, options) => inner.refresh(row, slots, options),
    aggregate: (input, topLimit) => (input.metrics.some(readsFacts) ? aggregateBoth(inner, reads, input, topLimit) : inner.aggregate(input, topLimit)),
    async percentileCap(capScope: CapScope, metric: MetricSpec, quantile: number) {
      if (!readsFacts(metric)) return inner.percentileCap(capScope, metric, quantile);
      const { table, spec } = await reads.onSource({ ...metric, denominator: undefined });
      return reads.run(table, (session) => reads.refresher.percentile(table, session, spec, capScope.eventsBefore, quantile));
    },
    lateEvents: (lateScope, metrics) =>
      inner.lateEvents(
        lateScope,
        metrics.filter((metric) => !readsFacts(metric)),
      ),
    sequences: (input) => inner.sequences(input),
    quantileValues: async (valueScope, metric, level) => {
      if (readsFacts(metric)) throw problems.metricNotComputable('a quantile of a fact table is not computed on its source yet');
      return inner.quantileValues(valueScope, metric, level);
    },
    // Slices of a primary metric on a fact table are not computed on the source yet: the snapshot has none.
    breakdowns: async (input) => (input.primary && readsFacts(input.primary) ? [] : inner.breakdowns(input)),
    async periodCells(cellScope, spec, starts) {
      if (readsFacts(spec))
        throw problems.metricNotComputable('a bandit’s primary metric must read events: a metric on a fact table cannot steer its weights yet');
      return inner.periodCells(cellScope, spec, starts);
    },
    maintainedTotals: (experimentId, plan) => inner.maintainedTotals(experimentId, plan),
  };
}

/**
 * The view a snapshot reads through. Metrics on fact tables are read from their sources through
 * the warehouse view, which the store's rollups know nothing of: the store's part of such a
 * snapshot is a full computation, and the requested mode applies to the fact tables' reads
 * (incremental.ts), reported in `warehouse`.
 */
export async function snapshotView(
  deps: Pick<AnalysisDeps, 'analysisStore'> & WarehouseDeps,
  row: Pick<ExperimentRow, 'workspace_id' | 'id'>,
  onFacts: boolean,
  mode: ComputationMode,
): Promise<{ view: StoreView; mode: ComputationMode; warehouse: WarehouseRefreshReport | null }> {
  const view = await deps.analysisStore.view();
  if (!onFacts) return { view, mode, warehouse: null };
  const scope = { workspaceId: row.workspace_id, experimentId: row.id };
  const reads = factReads(deps, scope, mode);
  return { view: warehouseView(view, deps, scope, mode, reads), mode: 'full', warehouse: reads.refresher.report };
}

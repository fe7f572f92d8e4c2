/**
 * From the experiment's metric definitions to per-variant totals: which metrics to analyse
 * (ratio metrics with their components), what the SQL needs to know about each (its spec), and
 * the caps, resolved before the pass (absolute caps, a ratio component's percentile cap) or
 * during it (a metric's own percentile cap, from the largest values the pass returns; see
 * percentile-cap.ts).
 */
import type { ExperimentRow } from '../../experiments/read.js';
import type { Experiment } from '../../experiments/schemas.js';
import { parsePropertyPath } from '../../metrics/property-path.js';
import { cappingOf, findMetricsByIds, type MetricRow } from '../../metrics/read.js';
import type { AnalysisDeps, ViewDeps } from '../deps.js';
import { resolveFromTopValues, topLimit } from '../sql/percentile-cap.js';
import type { MetricSpec, UnitSource, VariantTotals } from '../store/contract.js';

/** The SQL's view of one metric that reads events, with its cap when already known. */
export function eventMetricSpec(metric: MetricRow, cap: number | null, percentile: number | null = null): MetricSpec {
  const reads = metric.aggregation !== 'count' && metric.property_path !== null;
  return {
    metric_id: metric.id,
    event_key: metric.event_key,
    kind: metric.kind,
    aggregation: metric.aggregation,
    window_ms: metric.unit_dedup_window_ms,
    value_keys: reads ? parsePropertyPath(metric.property_path as string) : null,
    cap,
    percentile,
    fact: metric.fact_table_id === null ? null : { fact_table_id: metric.fact_table_id, column: metric.fact_column, filter: metric.fact_filter },
  };
}

export function scopeOf(row: ExperimentRow, source: UnitSource) {
  return { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, source };
}

/**
 * A ratio component's cap: an absolute cap's value, a percentile cap computed over the
 * experiment's units now by its own statement (null when no unit has a nonzero value), or null.
 */
async function componentCap(ctx: ViewDeps, row: ExperimentRow, metric: MetricRow, source: UnitSource): Promise<number | null> {
  const capping = cappingOf(metric);
  if (capping === null) return null;
  if (capping.type === 'absolute') return capping.value;
  return ctx.view.percentileCap(scopeOf(row, source), eventMetricSpec(metric, null), capping.value);
}

/**
 * A metric's spec for the maintained totals (sql/rollup/totals.ts), known without reading data: an
 * absolute cap as its value, a percentile cap (the metric's or a ratio component's) pending, and
 * the CUPED lookback for every metric but a ratio.
 */
export function planSpec(metric: MetricRow, components: ReadonlyMap<string, MetricRow>, lookbackMs: number | null): MetricSpec {
  // A quantile's totals are only its units and conversions: its cap applies to the quantile's values (quantile-pass.ts).
  if (metric.kind === 'quantile') return eventMetricSpec(metric, null);
  const known = (item: MetricRow) => {
    const capping = cappingOf(item);
    return capping?.type === 'percentile' ? eventMetricSpec(item, null, capping.value) : eventMetricSpec(item, capping?.value ?? null);
  };
  if (metric.kind !== 'ratio') return lookbackMs === null ? known(metric) : { ...known(metric), lookback_ms: lookbackMs };
  const numerator = components.get(metric.numerator_metric_id ?? '');
  const denominator = components.get(metric.denominator_metric_id ?? '');
  if (!numerator || !denominator) throw new Error(`ratio metric ${metric.id} lost a component after loadMetrics checked it`);
  return { ...known(numerator), denominator: known(denominator) };
}

export interface ResolvedSpec {
  spec: MetricSpec;
}

/** A metric's SQL spec; a ratio's spec is its numerator's with the denominator's beside it. */
export async function resolveSpec(
  ctx: ViewDeps,
  row: ExperimentRow,
  metric: MetricRow,
  components: ReadonlyMap<string, MetricRow>,
  source: UnitSource = 'events',
): Promise<ResolvedSpec> {
  if (metric.kind === 'quantile') return { spec: eventMetricSpec(metric, null) };
  if (metric.kind !== 'ratio') {
    const capping = cappingOf(metric);
    if (capping?.type === 'percentile') return { spec: eventMetricSpec(metric, null, capping.value) };
    return { spec: eventMetricSpec(metric, capping?.value ?? null) };
  }
  const numerator = components.get(metric.numerator_metric_id ?? '');
  const denominator = components.get(metric.denominator_metric_id ?? '');
  if (!numerator || !denominator) throw new Error(`ratio metric ${metric.id} lost a component after loadMetrics checked it`);
  const spec = eventMetricSpec(numerator, await componentCap(ctx, row, numerator, source));
  return { spec: { ...spec, denominator: eventMetricSpec(denominator, await componentCap(ctx, row, denominator, source)) } };
}

interface CappedTotals {
  totals: Map<string, VariantTotals>;
  /** Per metric, the cap its values were held to (null when uncapped). */
  capsApplied: (number | null)[];
  /** Raw event rows the passes joined (0 from rollups). */
  eventsRead: number;
}

/**
 * One pass computes every metric's totals; a pending percentile cap is resolved from the largest
 * values the pass returned. Only when a chunk's LIMIT may have cut values above the cap (a very
 * uneven spread of large values over the chunks) is that cap computed by its own statement and
 * the pass repeated with every cap known.
 */
export async function aggregateWithCaps(
  ctx: ViewDeps,
  row: ExperimentRow,
  resolved: readonly ResolvedSpec[],
  chunkUnits: number | null,
  source: UnitSource = 'events',
): Promise<CappedTotals> {
  const input = { ...scopeOf(row, source), metrics: resolved.map((item) => item.spec), chunkUnits };
  const { totals, tops, eventsRead } = await ctx.view.aggregate(input, (quantile, units) => topLimit(quantile, units, chunkUnits !== null));
  const caps = resolved.map((item, index) =>
    item.spec.percentile ? resolveFromTopValues(totals, index, item.spec.percentile, tops.get(index)) : (item.spec.cap ?? null),
  );
  if (caps.every((cap) => cap !== undefined)) return { totals, capsApplied: caps as (number | null)[], eventsRead };
  const known: (number | null)[] = [];
  for (const [index, item] of resolved.entries()) {
    const cap = caps[index];
    known.push(cap !== undefined ? cap : await ctx.view.percentileCap(scopeOf(row, source), item.spec, item.spec.percentile as number));
  }
  const again = { ...input, metrics: resolved.map((item, index) => ({ ...item.spec, cap: known[index] ?? null, percentile: null })) };
  const second = await ctx.view.aggregate(again);
  return { totals: second.totals, capsApplied: known, eventsRead: eventsRead + second.eventsRead };
}

interface LoadedMetrics {
  primary: MetricRow | null;
  guardrails: MetricRow[];
  /** Goals beside the primary (secondary_metric_ids), in their order; their totals follow the guardrails'. */
  secondaries: MetricRow[];
  /** The numerators and denominators of the ratio metrics among them, by id. */
  components: Map<string, MetricRow>;
}

export async function loadMetrics(ctx: Pick<AnalysisDeps, 'db'>, experiment: Experiment): Promise<LoadedMetrics> {
  const secondaryIds = experiment.secondary_metric_ids ?? [];
  const ids = [...(experiment.primary_metric_id ? [experiment.primary_metric_id] : []), ...experiment.guardrail_metric_ids, ...secondaryIds];
  const found = new Map((await findMetricsByIds(ctx.db, experiment.workspace_id, ids)).map((metric) => [metric.id, metric]));
  const componentIds = [...found.values()].flatMap((metric) =>
    [metric.numerator_metric_id, metric.denominator_metric_id].filter((id): id is string => id !== null),
  );
  const components = new Map((await findMetricsByIds(ctx.db, experiment.workspace_id, componentIds)).map((metric) => [metric.id, metric]));
  // A ratio whose component is gone cannot be computed; it is left out like a deleted metric.
  const usable = (metric: MetricRow) =>
    metric.kind !== 'ratio' || (components.has(metric.numerator_metric_id ?? '') && components.has(metric.denominator_metric_id ?? ''));
  const primaryRow = experiment.primary_metric_id ? found.get(experiment.primary_metric_id) : undefined;
  const primary = primaryRow && usable(primaryRow) ? primaryRow : null;
  const present = (id: string) => {
    const metric = found.get(id);
    return metric && usable(metric) ? [metric] : [];
  };
  return { primary, guardrails: experiment.guardrail_metric_ids.flatMap(present), secondaries: secondaryIds.flatMap(present), components };
}

import type { SnapshotTrigger } from '../../db/tables/analysis.js';
import type { Page } from '../../http/pagination.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import type { Principal } from '../api-keys/authenticator.js';
import { recordAudit } from '../audit/recorder.js';
import { findExperiment, findExperimentById, toExperiment, type Experiment, type ExperimentRow } from '../experiments/read.js';
import { reportedCap, type BuiltSnapshot, type PreviousEvidence } from './compute/build.js';
import { planningBlockOf } from './compute/planning-block.js';
import { plannedSamplePerVariant, recommend, recommendationContext } from './compute/recommendation.js';
import { cupedLookbackMs, withCovariate } from './cuped-spec.js';
import { banditInputOf } from './passes/period-totals.js';
import { summarizeSnapshot } from './history-summary.js';
import { breakdownKeys } from './passes/breakdowns-pass.js';
import { snapshotSlices } from './passes/metric-breakdowns-pass.js';
import type { AnalysisDeps, ViewDeps } from './deps.js';
import { aggregateWithCaps, loadMetrics, planSpec, resolveSpec, type ResolvedSpec } from './passes/metric-totals.js';
import { withQuantiles } from './passes/quantile-pass.js';
import { rollupSlots } from './store/rollup-slots.js';
import { isSequenceKind, mergeSequenceTotals, sequenceTotalsOf, withSequenceResults } from './passes/sequence-pass.js';
import { DEFAULT_HISTORY_PAGE, type AnalysedMetric, type AnalysisSnapshot, type Computation, type CupedReport, type HistoryQuery } from './schemas.js';
import type { MetricRow } from '../metrics/read.js';
import {
  COMPUTED_ACTION,
  PEEK_ACTION,
  countPeeks,
  findLatestSnapshot,
  insertSnapshot,
  listSnapshots,
  toSnapshot,
  type SnapshotDocument,
  type SnapshotPlan,
  type SnapshotRow,
} from './snapshot-store.js';
import type {
  BreakdownTotals,
  ComputationMode,
  MetricSpec,
  RefreshResult,
  RollupSlot,
  StoreRefreshOptions,
  TotalsPlan,
  UnitSource,
  VariantTotals,
} from './store/contract.js';
import { EMPTY_TOTALS, maintainable } from './store/fold.js';
import { syncAssignedExposures } from './warehouse/assignment-exposures.js';
import { warehouseComputationOf } from './warehouse/computation-schema.js';
import { readFactTables, snapshotView } from './warehouse/view.js';

/** The refresh's test hooks a computation passes on (the store's refresh). */
type RefreshHooks = Pick<StoreRefreshOptions, 'beforeCommit' | 'afterStep' | 'stepUnits' | 'roundEvents' | 'comparedBySetAtMost'>;

export interface ComputeOptions {
  trigger: SnapshotTrigger;
  /** Default: the store's (incremental on SQLite and PostgreSQL, full on ClickHouse). */
  mode?: ComputationMode;
  /** Incremental only: drop the experiment's rollups and build them again from raw events. */
  rebuild?: boolean;
  /** Tests: passed to the store's refresh. */
  refresh?: RefreshHooks;
  /** Set when a person or key asked for the snapshot: it is then audit-logged with the insert. */
  audit?: { actorId: string | null; via: string } | undefined;
  /** Units per aggregation statement (default: the store's); tests vary it. */
  chunkUnits?: number | null;
  /** False skips the breakdowns pass (the benchmark's baseline); snapshots then carry none. */
  breakdowns?: boolean;
}

/** The always-valid p-values of the latest snapshot, so a past rejection stays a rejection. */
function previousEvidence(latest: SnapshotRow | undefined): PreviousEvidence | null {
  if (!latest) return null;
  const document = JSON.parse(latest.document) as SnapshotDocument;
  const pValues = document.decision.always_valid_p_values;
  if (!pValues) return null;
  return { method: document.decision.method, primary_metric_id: document.primary_metric?.id ?? null, p_values: pValues };
}

/** The snapshot's `primary_metric` (and each secondary's description): the metric as it was defined when computed, and how it was analysed. */
function analysedPrimary(primary: MetricRow, cap: number | null, cuped: CupedReport | null): AnalysedMetric {
  return {
    id: primary.id,
    key: primary.key,
    name: primary.name,
    unit: primary.unit,
    kind: primary.kind,
    aggregation: primary.aggregation,
    higher_is_better: primary.higher_is_better === 1,
    cap_applied: reportedCap(primary, cap),
    cuped,
    ...(primary.kind === 'quantile' ? { quantile: primary.quantile ?? 0.5, quantile_level: primary.quantile_level ?? 'event' } : {}),
  };
}

/** The built snapshot's parts: the secondaries described as `primary_metric` is (`caps` their own), and the rest as it goes into the document. */
function splitBuilt(built: BuiltSnapshot, secondaries: readonly MetricRow[], caps: (number | null)[]) {
  const { decision_rule_satisfied: satisfied, primary_cuped: primaryCuped, secondary_per_variant: results, secondary_cuped: cuped, ...rest } = built;
  const secondaryMetrics = secondaries.map((metric, index) => ({
    ...analysedPrimary(metric, caps[index] ?? null, cuped[index] ?? null),
    per_variant: results[index] ?? [],
  }));
  return { satisfied, primaryCuped, secondaryMetrics, rest };
}

interface Analysis {
  document: Omit<SnapshotDocument, 'computation'>;
  satisfied: boolean;
  computation: Omit<Computation, 'duration_ms'>;
}

interface AnalyseOptions {
  computedAt: number;
  chunkUnits: number | null;
  withBreakdowns: boolean;
  mode: ComputationMode;
  rebuild: boolean;
  refresh: RefreshHooks | undefined;
}

/** Incremental: brings the rollups up to date first (the store's refresh); a full computation leaves them alone. */
async function refreshedFor(ctx: ViewDeps, row: ExperimentRow, slots: RollupSlot[], options: AnalyseOptions, plan: TotalsPlan | null): Promise<RefreshResult> {
  if (options.mode === 'full') return { events_read: 0, units_refreshed: 0 };
  return ctx.view.refresh(row, slots, { rebuild: options.rebuild, plan, ...options.refresh });
}

interface MetricsTotals {
  totals: Map<string, VariantTotals>;
  capsApplied: (number | null)[];
  eventsRead: number;
  /** Per metric, its spec as analysed (covariate included), and the primary's without it. */
  specs: MetricSpec[];
  primarySpec: MetricSpec | null;
  /** The slices' totals when the maintained ones serve (null: the breakdowns pass computes them). */
  breakdowns: BreakdownTotals[] | null;
}

/** Every metric's totals by the general pass, from raw events or every unit's rollups; with `only`, just those metrics (others stay empty). */
async function passTotals(
  ctx: ViewDeps,
  row: ExperimentRow,
  metrics: readonly MetricRow[],
  context: { components: ReadonlyMap<string, MetricRow>; lookbackMs: number | null; chunkUnits: number | null; source: UnitSource },
): Promise<MetricsTotals> {
  const unadjusted: ResolvedSpec[] = [];
  for (const metric of metrics) unadjusted.push(await resolveSpec(ctx, row, metric, context.components, context.source));
  const resolved: ResolvedSpec[] = [];
  for (const spec of unadjusted) resolved.push(await withCovariate(ctx, row, spec, context.lookbackMs, context.source));
  const { totals, capsApplied, eventsRead } = await aggregateWithCaps(ctx, row, resolved, context.chunkUnits, context.source);
  const specs = resolved.map((item) => item.spec);
  return { totals, capsApplied, eventsRead, specs, primarySpec: unadjusted[0]?.spec ?? null, breakdowns: null };
}

/**
 * Incremental: every metric's totals from the maintained ones (the store's), but a metric
 * with a percentile cap (the cap moves with every unit), whose totals the general pass computes
 * from the rollups; the breakdowns' too when the primary metric is maintained.
 */
async function maintainedTotals(
  ctx: ViewDeps,
  row: ExperimentRow,
  metrics: readonly MetricRow[],
  plan: TotalsPlan,
  context: { components: ReadonlyMap<string, MetricRow>; lookbackMs: number | null; chunkUnits: number | null },
): Promise<MetricsTotals> {
  const stored = await ctx.view.maintainedTotals(row.id, plan);
  // Indexes of the metrics the pass computes, and each one's place among the pass's metrics.
  const pending = metrics.flatMap((_, index) => (maintainable(plan.metrics[index] as MetricSpec) ? [] : [index]));
  const pass =
    pending.length > 0
      ? await passTotals(
          ctx,
          row,
          pending.map((index) => metrics[index] as MetricRow),
          { ...context, source: 'rollups' },
        )
      : null;
  const passed = (index: number) => pending.indexOf(index);
  const specs = metrics.map((_, index) => (passed(index) >= 0 ? pass?.specs[passed(index)] : undefined) ?? (plan.metrics[index] as MetricSpec));
  const capsApplied = metrics.map((_, index) =>
    passed(index) >= 0 ? (pass?.capsApplied[passed(index)] ?? null) : ((plan.metrics[index] as MetricSpec).cap ?? null),
  );
  for (const [key, variant] of pass?.totals ?? []) {
    const entry = stored.totals.get(key) ?? { variant_key: key, units: variant.units, metrics: metrics.map(() => ({ ...EMPTY_TOTALS })) };
    pending.forEach((index, at) => (entry.metrics[index] = variant.metrics[at] ?? { ...EMPTY_TOTALS }));
    stored.totals.set(key, entry);
  }
  const primaryMaintained = plan.primary === null || maintainable(plan.primary);
  const primarySpec = plan.primary === null ? null : primaryMaintained ? plan.primary : passed(0) === 0 ? (pass?.primarySpec ?? null) : null;
  return {
    totals: stored.totals,
    capsApplied,
    eventsRead: pass?.eventsRead ?? 0,
    specs,
    primarySpec,
    breakdowns: primaryMaintained ? stored.breakdowns : null,
  };
}

/** What an incremental computation's maintained totals are sums of (a store without them, ClickHouse, aggregates every unit's rollups at each snapshot). */
function totalsPlanOf(
  experiment: Experiment,
  primary: MetricRow | null,
  metrics: readonly MetricRow[],
  components: ReadonlyMap<string, MetricRow>,
  lookbackMs: number | null,
): TotalsPlan {
  return {
    metrics: metrics.map((metric) => planSpec(metric, components, lookbackMs)),
    breakdowns: breakdownKeys(experiment.dimensions),
    primary: primary ? planSpec(primary, components, null) : null,
  };
}

/**
 * Every metric's totals, primary first: funnel and retention metrics counted apart
 * (sequence-pass.ts), the rest through the store's sums (the maintained ones, or a pass).
 */
async function snapshotTotals(
  ctx: ViewDeps & Pick<AnalysisDeps, 'analysisStore'>,
  experiment: Experiment,
  row: ExperimentRow,
  options: AnalyseOptions,
  loaded: Awaited<ReturnType<typeof loadMetrics>>,
  lookbackMs: number | null,
) {
  const { primary, guardrails, secondaries, components } = loaded;
  const store = ctx.analysisStore;
  const metrics = [...(primary ? [primary] : []), ...guardrails, ...secondaries];
  const summed = metrics.filter((metric) => !isSequenceKind(metric.kind));
  const summedPrimary = primary && !isSequenceKind(primary.kind) ? primary : null;
  const source: UnitSource = options.mode === 'incremental' ? 'rollups' : 'events';
  const plan = options.mode === 'incremental' && store.maintainsTotals ? totalsPlanOf(experiment, summedPrimary, summed, components, lookbackMs) : null;
  const refreshed = await refreshedFor(ctx, row, rollupSlots(summed, components, lookbackMs), options, plan);
  const context = { components, lookbackMs, chunkUnits: options.chunkUnits };
  const sums = plan ? await maintainedTotals(ctx, row, summed, plan, context) : await passTotals(ctx, row, summed, { ...context, source });
  // Quantiles are read apart too (quantile-pass.ts), their caps and events over the sums'.
  const computed = await withQuantiles(ctx, row, summed, sums);
  const sequences = await sequenceTotalsOf(ctx, row, metrics, options.computedAt);
  let plain = 0;
  const quantiles = metrics.map((metric) => (isSequenceKind(metric.kind) ? null : (computed.quantiles[plain++] ?? null)));
  return { computed, refreshed, sequences, summedPrimary, quantiles, ...mergeSequenceTotals(metrics, computed, sequences) };
}

const summedKind = (metric: MetricRow) => !isSequenceKind(metric.kind);

/** One view for the whole snapshot, so every read counts the same events; a fact table's metrics read through the warehouse view. */
async function snapshotContext(deps: AnalysisDeps, row: ExperimentRow, loaded: Awaited<ReturnType<typeof loadMetrics>>, requested: AnalyseOptions['mode']) {
  const { primary, guardrails, secondaries, components } = loaded;
  const metrics = [...(primary ? [primary] : []), ...guardrails, ...secondaries];
  const { view, mode, warehouse } = await snapshotView(deps, row, readFactTables(metrics, components), requested);
  return { ctx: { ...deps, view }, mode, warehouse };
}

async function analyse(deps: AnalysisDeps, experiment: Experiment, row: ExperimentRow, options: AnalyseOptions): Promise<Analysis> {
  const { computedAt, chunkUnits } = options;
  const store = deps.analysisStore;
  await syncAssignedExposures(deps, row);
  await store.prepare(row.id);
  const loaded = await loadMetrics(deps, experiment);
  const { primary, guardrails, secondaries } = loaded;
  const { ctx, mode, warehouse } = await snapshotContext(deps, row, loaded, options.mode);
  const lookbackMs = cupedLookbackMs(experiment);
  const source: UnitSource = mode === 'incremental' ? 'rollups' : 'events';
  const { computed, totals, capsApplied, refreshed, sequences, summedPrimary, quantiles } = await snapshotTotals(
    ctx,
    experiment,
    row,
    { ...options, mode },
    loaded,
    lookbackMs,
  );
  const lateEvents = await ctx.view.lateEvents({ workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at }, computed.specs);
  const bandit = await banditInputOf(ctx, experiment, row, source);
  const built = await ctx.stats.run('snapshot', {
    variants: experiment.variants,
    // A bandit's own minimum stands in for the rule's (its stopping rule replaces the decision rule's).
    decisionRule: { ...experiment.decision_rule, min_sample_per_variant: plannedSamplePerVariant(experiment) },
    startedAt: row.started_at as number,
    stoppedAt: row.stopped_at,
    computedAt,
    primary,
    guardrails,
    secondaries,
    multipleTesting: experiment.multiple_testing,
    totals,
    capsApplied,
    quantiles,
    previous: previousEvidence(await findLatestSnapshot(ctx.db, row.workspace_id, row.id)),
    cuped: experiment.variance_reduction,
    bandit,
  });
  const { satisfied, primaryCuped, secondaryMetrics, rest } = splitBuilt(built, secondaries, capsApplied.slice((primary ? 1 : 0) + guardrails.length));
  // Funnel and retention metrics have no slices of their own (a funnel or retention primary's: units only).
  const summedOnly = { primary: summedPrimary, guardrails: guardrails.filter(summedKind), secondaries: secondaries.filter(summedKind) };
  const sliceInput = { experiment, row, loaded: summedOnly, computed, capsApplied: computed.capsApplied, totals, chunkUnits, source, bandit };
  const slices = options.withBreakdowns ? await snapshotSlices(ctx, sliceInput) : { breakdowns: [], metric_breakdowns: [] };
  const unrecommended = {
    primary_metric: primary ? analysedPrimary(primary, capsApplied[0] ?? null, primaryCuped) : null,
    ...rest,
    secondary_metrics: secondaryMetrics,
    peek_count_at_computation: await countPeeks(ctx.db, row.workspace_id, row.id, computedAt),
    late_event_count: lateEvents.total,
    late_events: { counted: lateEvents.counted, before_exposure: lateEvents.before_exposure, outside_window: lateEvents.outside_window },
    weights_changed_since_start: experiment.weights_changed_since_start,
    ...slices,
    planning: planningBlockOf(experiment, { totals, primary, cuped: lookbackMs !== null, daysElapsed: rest.decision.days_elapsed }),
  };
  const recommendation = recommend(unrecommended, recommendationContext(experiment, row.stopped_at !== null));
  const completed = withSequenceResults(unrecommended, { primary, guardrails, secondaries }, sequences);
  const document: Analysis['document'] = { ...completed, decision: { ...unrecommended.decision, recommendation } };
  const computation = { mode, events_read: refreshed.events_read + computed.eventsRead, units_refreshed: refreshed.units_refreshed, store: store.name };
  return { document, satisfied, computation: warehouse ? { ...computation, warehouse: warehouseComputationOf(warehouse) } : computation };
}

/**
 * Computes and stores a snapshot of the experiment now. The reads run outside any transaction
 * (on SQLite a write transaction would block ingest for the whole computation); the insert and
 * its audit entry commit together.
 */
export async function computeSnapshot(ctx: AnalysisDeps, given: ExperimentRow, options: ComputeOptions): Promise<AnalysisSnapshot> {
  if (given.started_at === null) throw problems.experimentNotStarted('the experiment has not started, so there is nothing to analyse yet');
  const reweighted = (await ctx.reweightIfDue?.(given)) === true;
  const row = (reweighted ? await findExperimentById(ctx.db, given.id) : undefined) ?? given;
  const experiment = toExperiment(row);
  const started = performance.now();
  const computedAt = ctx.clock.now();
  const store = ctx.analysisStore;
  // A store without chunks (ClickHouse) runs one statement per experiment whatever the caller asks.
  const chunkUnits = store.chunkUnits === null || options.chunkUnits === undefined ? store.chunkUnits : options.chunkUnits;
  const analysis = await analyse(ctx, experiment, row, {
    computedAt,
    chunkUnits,
    withBreakdowns: options.breakdowns !== false,
    mode: options.mode ?? store.defaultMode,
    rebuild: options.rebuild === true,
    refresh: options.refresh,
  });
  const { satisfied } = analysis;
  const document: SnapshotDocument = { ...analysis.document, computation: { ...analysis.computation, duration_ms: Math.round(performance.now() - started) } };
  const snapshot: SnapshotRow = {
    id: newId(),
    workspace_id: row.workspace_id,
    experiment_id: row.id,
    computed_at: computedAt,
    decision_rule_satisfied: satisfied ? 1 : 0,
    trigger: options.trigger,
    document: JSON.stringify(document),
  };
  const audit = options.audit;
  const afterCommit = await ctx.db.transaction().execute(async (trx) => {
    await insertSnapshot(trx, snapshot);
    // Alerts and auto-stop commit with the snapshot or not at all.
    const listened = await ctx.onSnapshot?.(trx, { experiment: row, snapshot: toSnapshot(snapshot) });
    if (!audit) return listened;
    await recordAudit(trx, {
      workspaceId: row.workspace_id,
      actorId: audit.actorId,
      action: COMPUTED_ACTION,
      targetType: 'experiment',
      targetId: row.id,
      payload: {
        snapshot_id: snapshot.id,
        via: audit.via,
        // What a person reads first: the recommendation (which weighs the health checks), then the rule's verdict.
        recommendation: { action: document.decision.recommendation.action, variant_key: document.decision.recommendation.variant_key },
        verdict: document.decision.verdict,
        decision_rule_satisfied: snapshot.decision_rule_satisfied === 1,
        mode: document.computation?.mode ?? null,
      },
      at: computedAt,
    });
    return listened;
  });
  afterCommit?.();
  ctx.metrics.observeSnapshot(options.trigger, (performance.now() - started) / 1000);
  return toSnapshot(snapshot);
}

async function experimentOf(ctx: AnalysisDeps, workspaceId: string, id: string): Promise<ExperimentRow> {
  const row = await findExperiment(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no experiment with id ${id}`);
  return row;
}

/** POST /v1/experiments/{id}/results/compute: audit-logged with the caller's key. */
export async function computeForCaller(ctx: AnalysisDeps, principal: Principal, experimentId: string, mode?: ComputationMode): Promise<AnalysisSnapshot> {
  const row = await experimentOf(ctx, principal.workspaceId, experimentId);
  return computeSnapshot(ctx, row, { trigger: 'api', mode, audit: { actorId: principal.keyId, via: principal.via } });
}

/** The background job and the CLI: by id alone; null when the experiment is gone or never started. */
export async function computeById(ctx: AnalysisDeps, experimentId: string, options: ComputeOptions): Promise<AnalysisSnapshot | null> {
  const row = await findExperimentById(ctx.db, experimentId);
  if (!row || row.started_at === null) return null;
  return computeSnapshot(ctx, row, options);
}

/** Why there is no snapshot, and what gets one: a draft cannot be computed (409) until it starts. */
function noSnapshotYet(experiment: ExperimentRow): string {
  if (experiment.started_at === null) {
    return `experiment ${experiment.id} is a draft: it has no results until it starts (POST /v1/experiments/${experiment.id}/start); snapshots are then computed on the decision rule's snapshot_cadence_minutes, or at once with POST /v1/experiments/${experiment.id}/results/compute`;
  }
  return `experiment ${experiment.id} has no snapshot yet; POST /v1/experiments/${experiment.id}/results/compute computes one now`;
}

/**
 * GET /v1/experiments/{id}/results. A read through the admin UI's session is a peek and is
 * audit-logged (it inflates the error rate of the posterior-threshold rule); an API key's read is
 * not (SDKs poll results for SRM monitoring).
 */
export async function latestResults(ctx: AnalysisDeps, principal: Principal, experimentId: string): Promise<AnalysisSnapshot> {
  const experiment = await experimentOf(ctx, principal.workspaceId, experimentId);
  const latest = await findLatestSnapshot(ctx.db, principal.workspaceId, experiment.id);
  if (!latest) throw problems.notFound(noSnapshotYet(experiment));
  if (principal.via === 'session') {
    await recordAudit(ctx.db, {
      workspaceId: principal.workspaceId,
      actorId: principal.keyId,
      action: PEEK_ACTION,
      targetType: 'experiment',
      targetId: experiment.id,
      payload: { snapshot_id: latest.id },
      at: ctx.clock.now(),
    });
  }
  return toSnapshot(latest, planOf(experiment));
}

/** What stored snapshots without a recommendation are read against (store.ts). */
function planOf(row: ExperimentRow): SnapshotPlan {
  return { decision_rule: toExperiment(row).decision_rule, stopped_at: row.stopped_at };
}

/** GET /v1/experiments/{id}/results/history: oldest first, keyset-paged. */
export async function resultsHistory(ctx: AnalysisDeps, workspaceId: string, experimentId: string, query: HistoryQuery) {
  const experiment = await experimentOf(ctx, workspaceId, experimentId);
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  const page: Page<AnalysisSnapshot> = await listSnapshots(
    ctx.db,
    workspaceId,
    experiment.id,
    {
      limit: query.limit ?? DEFAULT_HISTORY_PAGE,
      cursor: query.cursor,
      since,
    },
    planOf(experiment),
  );
  const snapshots = query.fields === 'summary' ? page.data.map(summarizeSnapshot) : page.data;
  return { experiment_id: experiment.id, snapshots, next_cursor: page.next_cursor };
}

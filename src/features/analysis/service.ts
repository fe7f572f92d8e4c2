import type { AppContext } from '../../context.js';
import type { SnapshotTrigger } from '../../db/tables/analysis.js';
import type { Page } from '../../http/pagination.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import type { Principal } from '../api-keys/authenticator.js';
import { recordAudit } from '../audit/store.js';
import { findExperiment, toExperiment, type ExperimentRow } from '../experiments/store.js';
import type { Experiment } from '../experiments/schemas.js';
import { parsePropertyPath } from '../metrics/property-path.js';
import { cappingOf, findMetricsByIds, type MetricRow } from '../metrics/store.js';
import { aggregateByVariant, countLateEvents, type MetricSpec } from './aggregate-store.js';
import { buildSnapshot, type PreviousEvidence } from './build.js';
import { percentileCap } from './percentile-cap.js';
import { DEFAULT_HISTORY_PAGE, type AnalysisSnapshot, type HistoryQuery } from './schemas.js';
import {
  COMPUTED_ACTION,
  PEEK_ACTION,
  countPeeks,
  findExperimentById,
  findLatestSnapshot,
  insertSnapshot,
  listSnapshots,
  toSnapshot,
  type SnapshotDocument,
  type SnapshotRow,
} from './store.js';

export interface ComputeOptions {
  trigger: SnapshotTrigger;
  /** Set when a person or key asked for the snapshot: it is then audit-logged with the insert. */
  audit?: { actorId: string | null; via: string } | undefined;
  /** Units per aggregation statement (default: the database's, DialectSeam.analysisChunkUnits); tests vary it. */
  chunkUnits?: number | null;
}

/** The SQL's view of one metric that reads events, with its cap once resolved. */
function eventMetricSpec(metric: MetricRow, cap: number | null): MetricSpec {
  const reads = metric.aggregation !== 'count' && metric.property_path !== null;
  return {
    event_key: metric.event_key,
    kind: metric.kind,
    aggregation: metric.aggregation,
    window_ms: metric.unit_dedup_window_ms,
    value_keys: reads ? parsePropertyPath(metric.property_path as string) : null,
    cap,
  };
}

/**
 * The cap a metric applies in this snapshot: an absolute cap's value, a percentile cap computed
 * over the experiment's units now (null when no unit has a nonzero value), or null.
 */
async function resolveCap(ctx: AppContext, row: ExperimentRow, metric: MetricRow): Promise<number | null> {
  const capping = cappingOf(metric);
  if (capping === null) return null;
  if (capping.type === 'absolute') return capping.value;
  const scope = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at };
  return percentileCap(ctx.db, ctx.seam, ctx.reads, scope, eventMetricSpec(metric, null), capping.value);
}

interface ResolvedSpec {
  spec: MetricSpec;
  capApplied: number | null;
}

/** A metric's SQL spec with resolved caps; a ratio's spec is its numerator's with the denominator's beside it. */
async function resolveSpec(ctx: AppContext, row: ExperimentRow, metric: MetricRow, components: ReadonlyMap<string, MetricRow>): Promise<ResolvedSpec> {
  if (metric.kind !== 'ratio') {
    const cap = await resolveCap(ctx, row, metric);
    return { spec: eventMetricSpec(metric, cap), capApplied: cap };
  }
  const numerator = components.get(metric.numerator_metric_id ?? '');
  const denominator = components.get(metric.denominator_metric_id ?? '');
  if (!numerator || !denominator) throw new Error(`ratio metric ${metric.id} lost a component after loadMetrics checked it`);
  const spec = eventMetricSpec(numerator, await resolveCap(ctx, row, numerator));
  return { spec: { ...spec, denominator: eventMetricSpec(denominator, await resolveCap(ctx, row, denominator)) }, capApplied: null };
}

interface LoadedMetrics {
  primary: MetricRow | null;
  guardrails: MetricRow[];
  /** The numerators and denominators of the ratio metrics among them, by id. */
  components: Map<string, MetricRow>;
}

async function loadMetrics(ctx: AppContext, experiment: Experiment): Promise<LoadedMetrics> {
  const ids = [...(experiment.primary_metric_id ? [experiment.primary_metric_id] : []), ...experiment.guardrail_metric_ids];
  const found = new Map((await findMetricsByIds(ctx.db, experiment.workspace_id, ids)).map((metric) => [metric.id, metric]));
  const componentIds = [...found.values()].flatMap((metric) => [metric.numerator_metric_id, metric.denominator_metric_id].filter((id): id is string => id !== null));
  const components = new Map((await findMetricsByIds(ctx.db, experiment.workspace_id, componentIds)).map((metric) => [metric.id, metric]));
  // A ratio whose component is gone cannot be computed; it is left out like a deleted metric.
  const usable = (metric: MetricRow) => metric.kind !== 'ratio' || (components.has(metric.numerator_metric_id ?? '') && components.has(metric.denominator_metric_id ?? ''));
  const primaryRow = experiment.primary_metric_id ? found.get(experiment.primary_metric_id) : undefined;
  const primary = primaryRow && usable(primaryRow) ? primaryRow : null;
  const guardrails = experiment.guardrail_metric_ids.flatMap((id) => {
    const metric = found.get(id);
    return metric && usable(metric) ? [metric] : [];
  });
  return { primary, guardrails, components };
}

function eventKeysOf(metrics: readonly MetricSpec[]): string[] {
  return metrics.flatMap((spec) => [spec.event_key, ...(spec.denominator ? [spec.denominator.event_key] : [])]);
}

/** The always-valid p-values of the latest snapshot, so a past rejection stays a rejection. */
function previousEvidence(latest: SnapshotRow | undefined): PreviousEvidence | null {
  if (!latest) return null;
  const document = JSON.parse(latest.document) as SnapshotDocument;
  const pValues = document.decision.always_valid_p_values;
  if (!pValues) return null;
  return { method: document.decision.method, primary_metric_id: document.primary_metric?.id ?? null, p_values: pValues };
}

interface Analysis {
  document: SnapshotDocument;
  satisfied: boolean;
}

async function analyse(ctx: AppContext, experiment: Experiment, row: ExperimentRow, computedAt: number, chunkUnits: number | null): Promise<Analysis> {
  const { primary, guardrails, components } = await loadMetrics(ctx, experiment);
  const metrics = [...(primary ? [primary] : []), ...guardrails];
  const resolved: ResolvedSpec[] = [];
  for (const metric of metrics) resolved.push(await resolveSpec(ctx, row, metric, components));
  const specs = resolved.map((item) => item.spec);
  const totals = await aggregateByVariant(ctx.db, ctx.seam, ctx.reads, {
    workspaceId: row.workspace_id,
    experimentId: row.id,
    metrics: specs,
    eventsBefore: row.stopped_at,
    chunkUnits,
  });
  const lateEventCount = await countLateEvents(ctx.db, row.workspace_id, row.id, eventKeysOf(specs));
  const peekCount = await countPeeks(ctx.db, row.workspace_id, row.id, computedAt);
  const latest = await findLatestSnapshot(ctx.db, row.workspace_id, row.id);
  const built = buildSnapshot({
    variants: experiment.variants,
    decisionRule: experiment.decision_rule,
    startedAt: row.started_at as number,
    stoppedAt: row.stopped_at,
    computedAt,
    primary,
    guardrails,
    totals,
    capsApplied: resolved.map((item) => item.capApplied),
    previous: previousEvidence(latest),
  });
  const { decision_rule_satisfied: satisfied, ...rest } = built;
  const document: SnapshotDocument = {
    primary_metric: primary
      ? { id: primary.id, key: primary.key, kind: primary.kind, aggregation: primary.aggregation, higher_is_better: primary.higher_is_better === 1, cap_applied: resolved[0]?.capApplied ?? null }
      : null,
    ...rest,
    peek_count_at_computation: peekCount,
    late_event_count: lateEventCount,
    weights_changed_since_start: experiment.weights_changed_since_start,
  };
  return { document, satisfied };
}

/**
 * Computes and stores a snapshot of the experiment now. The reads run outside any transaction
 * (on SQLite a write transaction would block ingest for the whole computation); the insert and
 * its audit entry commit together.
 */
export async function computeSnapshot(ctx: AppContext, row: ExperimentRow, options: ComputeOptions): Promise<AnalysisSnapshot> {
  if (row.started_at === null) throw problems.conflict('the experiment has not started, so there is nothing to analyse yet');
  const experiment = toExperiment(row);
  const computedAt = ctx.clock.now();
  const { document, satisfied } = await analyse(ctx, experiment, row, computedAt, options.chunkUnits === undefined ? ctx.seam.analysisChunkUnits : options.chunkUnits);
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
  await ctx.db.transaction().execute(async (trx) => {
    await insertSnapshot(trx, snapshot);
    if (!audit) return;
    await recordAudit(trx, {
      workspaceId: row.workspace_id,
      actorId: audit.actorId,
      action: COMPUTED_ACTION,
      targetType: 'experiment',
      targetId: row.id,
      payload: { snapshot_id: snapshot.id, via: audit.via, verdict: document.decision.verdict, decision_rule_satisfied: snapshot.decision_rule_satisfied === 1 },
      at: computedAt,
    });
  });
  return toSnapshot(snapshot);
}

async function experimentOf(ctx: AppContext, workspaceId: string, id: string): Promise<ExperimentRow> {
  const row = await findExperiment(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no experiment with id ${id}`);
  return row;
}

/** POST /v1/experiments/{id}/results/compute: audit-logged with the caller's key. */
export async function computeForCaller(ctx: AppContext, principal: Principal, experimentId: string): Promise<AnalysisSnapshot> {
  const row = await experimentOf(ctx, principal.workspaceId, experimentId);
  return computeSnapshot(ctx, row, { trigger: 'api', audit: { actorId: principal.keyId, via: principal.via } });
}

/** The background job and the CLI: by id alone; null when the experiment is gone or never started. */
export async function computeById(ctx: AppContext, experimentId: string, options: ComputeOptions): Promise<AnalysisSnapshot | null> {
  const row = await findExperimentById(ctx.db, experimentId);
  if (!row || row.started_at === null) return null;
  return computeSnapshot(ctx, row, options);
}

/**
 * GET /v1/experiments/{id}/results. A read through the admin UI's session is a peek and is
 * audit-logged (it inflates the error rate of the posterior-threshold rule); an API key's read is
 * not (SDKs poll results for SRM monitoring).
 */
export async function latestResults(ctx: AppContext, principal: Principal, experimentId: string): Promise<AnalysisSnapshot> {
  const experiment = await experimentOf(ctx, principal.workspaceId, experimentId);
  const latest = await findLatestSnapshot(ctx.db, principal.workspaceId, experiment.id);
  if (!latest) throw problems.notFound(`experiment ${experiment.id} has no snapshot yet; POST /v1/experiments/${experiment.id}/results/compute computes one now`);
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
  return toSnapshot(latest);
}

/** GET /v1/experiments/{id}/results/history: oldest first, keyset-paged. */
export async function resultsHistory(ctx: AppContext, workspaceId: string, experimentId: string, query: HistoryQuery) {
  const experiment = await experimentOf(ctx, workspaceId, experimentId);
  const since = query.since === undefined ? undefined : Date.parse(query.since);
  const page: Page<AnalysisSnapshot> = await listSnapshots(ctx.db, workspaceId, experiment.id, { limit: query.limit ?? DEFAULT_HISTORY_PAGE, cursor: query.cursor, since });
  return { experiment_id: experiment.id, snapshots: page.data, next_cursor: page.next_cursor };
}

/**
 * A holdout's snapshots: computed on request through the analysis store (its `holdoutTotals`),
 * analysed by compute.ts, stored with their audit entry in one transaction.
 */
import { problems, type FieldError } from '../../../http/problems.js';
import { newId } from '../../../lib/ids.js';
import { toIso } from '../../../lib/time.js';
import { recordAudit } from '../../audit/recorder.js';
import { planSpec } from '../../analysis/passes/metric-totals.js';
import type { MetricSpec } from '../../analysis/store/contract.js';
import { findMetricsByIds, type MetricRow } from '../../metrics/read.js';
import type { HoldoutsDeps } from '../deps.js';
import { expectedShares, heldOutBuckets, sampleBuckets } from '../membership.js';
import { findHoldout, parseMetricIds, toHoldout, type HoldoutRow } from '../read.js';
import { holdoutExperiments } from '../service.js';
import { analyseHoldout } from './compute.js';
import type { HoldoutSnapshot } from './schemas.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
export const HOLDOUT_COMPUTED_ACTION = 'holdout.results_computed';

interface Actor {
  workspaceId: string;
  actorId: string;
}

async function holdoutOf(ctx: HoldoutsDeps, workspaceId: string, id: string): Promise<HoldoutRow> {
  const row = await findHoldout(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no holdout with id ${id}`);
  return row;
}

/** The holdout's metrics (deleted ones left out) and the components of its ratios, by id. */
async function metricsOf(ctx: HoldoutsDeps, row: HoldoutRow) {
  const ids = parseMetricIds(row.metric_ids);
  const metrics = await findMetricsByIds(ctx.db, row.workspace_id, ids);
  const componentIds = metrics.flatMap((metric) => [metric.numerator_metric_id, metric.denominator_metric_id].filter((id): id is string => id !== null));
  const components = new Map((await findMetricsByIds(ctx.db, row.workspace_id, componentIds)).map((metric) => [metric.id, metric]));
  const usable = metrics.filter(
    (metric) => metric.kind !== 'ratio' || (components.has(metric.numerator_metric_id ?? '') && components.has(metric.denominator_metric_id ?? '')),
  );
  return { ids, metrics: usable, components };
}

/** The longest window a metric counts events in (a ratio's: its components'). */
function windowOf(metric: MetricRow, components: ReadonlyMap<string, MetricRow>): number {
  if (metric.kind !== 'ratio') return metric.unit_dedup_window_ms;
  const parts = [metric.numerator_metric_id, metric.denominator_metric_id].map((id) => components.get(id ?? '')?.unit_dedup_window_ms ?? 0);
  return Math.max(...parts);
}

/** A duration as a person reads it: "7 days", "2.5 hours", "40 seconds". */
function duration(ms: number): string {
  const [size, unit] = ms >= DAY_MS ? [DAY_MS, 'days'] : ms >= HOUR_MS ? [HOUR_MS, 'hours'] : ms >= 60_000 ? [60_000, 'minutes'] : [1_000, 'seconds'];
  return `${Math.round((ms / size) * 10) / 10} ${unit}`;
}

/** A metric whose window is longer than the holdout has run could not have counted a whole window for any unit. */
function windowErrors(ids: readonly string[], metrics: readonly MetricRow[], components: ReadonlyMap<string, MetricRow>, runMs: number): FieldError[] {
  return metrics.flatMap((metric) => {
    const window = windowOf(metric, components);
    if (window <= runMs) return [];

    const message = `metric "${metric.key}" counts events over ${duration(window)} after each unit’s first contact, longer than the holdout has run (${duration(runMs)})`;
    return [{ pointer: `/metric_ids/${ids.indexOf(metric.id)}`, message }];
  });
}

/** A holdout's spec: caps as an experiment's, but a percentile cap is not applied (the values stay uncapped). */
function holdoutSpec(spec: MetricSpec, lookbackMs: number | null): MetricSpec {
  const plain = (item: MetricSpec): MetricSpec => ({ ...item, percentile: null });
  const base = { ...plain(spec), ...(spec.denominator ? { denominator: plain(spec.denominator) } : {}) };
  return lookbackMs === null || spec.denominator ? base : { ...base, lookback_ms: lookbackMs };
}

async function launchesIn(ctx: HoldoutsDeps, row: HoldoutRow, to: number) {
  const { covered } = await holdoutExperiments(ctx, row.workspace_id, row.id);
  const from = row.started_at as number;
  const launches = covered
    .filter((experiment) => experiment.launched_at !== null && experiment.launched_variant_key !== null)
    .filter((experiment) => Date.parse(experiment.launched_at as string) >= from && Date.parse(experiment.launched_at as string) <= to)
    .map((experiment) => ({
      experiment_id: experiment.id,
      experiment_key: experiment.key,
      variant_key: experiment.launched_variant_key as string,
      launched_at: experiment.launched_at as string,
    }))
    .sort((a, b) => Date.parse(a.launched_at) - Date.parse(b.launched_at));
  return { covered, launches };
}

async function analyse(ctx: HoldoutsDeps, row: HoldoutRow, computedAt: number): Promise<Omit<HoldoutSnapshot, 'id' | 'computation'> & { events_read: number }> {
  const from = row.started_at as number;
  const to = row.ended_at ?? computedAt;
  const { ids, metrics, components } = await metricsOf(ctx, row);
  const errors = windowErrors(ids, metrics, components, to - from);
  if (errors.length > 0) throw problems.validation(errors);
  const holdout = toHoldout(row);
  const lookbackDays = holdout.variance_reduction?.lookback_days ?? null;
  const specs = metrics.map((metric) => holdoutSpec(planSpec(metric, components, null), lookbackDays === null ? null : lookbackDays * DAY_MS));
  const percent = Number(row.percent);
  const summed = await ctx.analysisStore.holdoutTotals({
    workspaceId: row.workspace_id,
    holdoutId: row.id,
    heldOutBuckets: heldOutBuckets(percent),
    sampleBuckets: sampleBuckets(percent),
    eventsBefore: to,
    metrics: specs,
  });
  if (!summed)
    throw problems.holdoutAnalysisUnavailable(
      `the ${ctx.analysisStore.name} analysis store cannot compute a holdout’s snapshot; it reads first contacts from the primary database`,
    );
  const analysed = analyseHoldout({
    metrics,
    caps: specs.map((spec) => spec.cap ?? null),
    totals: summed.totals,
    shares: expectedShares(percent),
    cupedLookbackDays: lookbackDays,
  });
  const { covered, launches } = await launchesIn(ctx, row, to);
  return {
    holdout_id: row.id,
    computed_at: toIso(computedAt),
    period: { from: toIso(from), to: toIso(to) },
    percent,
    ...analysed,
    covered_experiments: covered,
    launches,
    events_read: summed.eventsRead,
  };
}

/** POST /v1/holdouts/{id}/results/compute: computes and stores a snapshot now, audit-logged with it. */
export async function computeHoldoutSnapshot(ctx: HoldoutsDeps, actor: Actor, id: string): Promise<HoldoutSnapshot> {
  const row = await holdoutOf(ctx, actor.workspaceId, id);
  if (row.started_at === null)
    throw problems.holdoutNotStarted(`holdout ${row.id} is a draft: it has nothing to analyse until it starts (POST /v1/holdouts/${row.id}/start)`);
  const started = performance.now();
  const computedAt = ctx.clock.now();
  const { events_read: eventsRead, ...analysed } = await analyse(ctx, row, computedAt);
  const snapshot: HoldoutSnapshot = {
    id: newId(),
    ...analysed,
    computation: { store: ctx.analysisStore.name, events_read: eventsRead, duration_ms: Math.round(performance.now() - started) },
  };
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('holdout_snapshots')
      .values({ id: snapshot.id, workspace_id: row.workspace_id, holdout_id: row.id, computed_at: computedAt, document: JSON.stringify(snapshot) })
      .execute();
    await recordAudit(trx, {
      workspaceId: actor.workspaceId,
      actorId: actor.actorId,
      action: HOLDOUT_COMPUTED_ACTION,
      targetType: 'holdout',
      targetId: row.id,
      payload: {
        snapshot_id: snapshot.id,
        units: Object.fromEntries(snapshot.groups.map((group) => [group.key, group.units])),
        srm_warning: snapshot.srm_warning,
        launches: snapshot.launches.length,
      },
      at: computedAt,
    });
  });
  return snapshot;
}

/** GET /v1/holdouts/{id}/results: the latest snapshot. */
export async function latestHoldoutResults(ctx: HoldoutsDeps, workspaceId: string, id: string): Promise<HoldoutSnapshot> {
  const row = await holdoutOf(ctx, workspaceId, id);
  const latest = await ctx.db
    .selectFrom('holdout_snapshots')
    .select('document')
    .where('workspace_id', '=', workspaceId)
    .where('holdout_id', '=', row.id)
    .orderBy('computed_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!latest) throw problems.notFound(`holdout ${row.id} has no snapshot yet; POST /v1/holdouts/${row.id}/results/compute computes one now`);
  return JSON.parse(latest.document) as HoldoutSnapshot;
}

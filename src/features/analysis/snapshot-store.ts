import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { AnalysisSnapshotsTable } from '../../db/tables/analysis.js';
import { paginate, type Page } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import { countAuditEntries } from '../audit/read.js';
import { listAnalysableExperiments, type AnalysableExperiment } from '../experiments/read.js';
import type { DecisionRuleSettings } from '../../stats/index.js';
import { recommend, recommendationContext } from './compute/recommendation.js';
import type { AnalysisSnapshot, VariantPosterior } from './schemas.js';

export type SnapshotRow = Selectable<AnalysisSnapshotsTable>;

/** Every snapshot field except the ones kept as columns. */
export type SnapshotDocument = Omit<AnalysisSnapshot, 'id' | 'experiment_id' | 'computed_at' | 'decision_rule_satisfied' | 'trigger'>;

export const PEEK_ACTION = 'experiment.results_peeked';
export const COMPUTED_ACTION = 'experiment.results_computed';

type StoredPosterior = Omit<VariantPosterior, 'effect'> & { effect?: VariantPosterior['effect'] };

/**
 * Snapshots stored before the effects (docs/analysis.md "What the fields mean") lack their fields; they read as
 * "no effect computed", the default direction and no cap, so every stored snapshot still fits
 * the response schema.
 */
function upgraded(document: SnapshotDocument, plan: SnapshotPlan | null, row: SnapshotRow): SnapshotDocument {
  const posteriors = (list: readonly StoredPosterior[]) => list.map((item) => ({ ...item, effect: item.effect ?? null }));
  const guardrails = document.guardrails.map((guardrail) => ({
    ...guardrail,
    metric_name: guardrail.metric_name ?? guardrail.metric_key,
    unit: guardrail.unit ?? null,
    higher_is_better: guardrail.higher_is_better ?? true,
    cap_applied: guardrail.cap_applied ?? null,
    per_variant: posteriors(guardrail.per_variant),
  }));
  const nameOf = (key: string) => guardrails.find((guardrail) => guardrail.metric_key === key)?.metric_name ?? key;
  const decision = {
    ...document.decision,
    guardrail_regressions: (document.decision.guardrail_regressions ?? []).map((item) => ({
      ...item,
      metric_name: item.metric_name ?? nameOf(item.metric_key),
    })),
  };
  const result: SnapshotDocument = {
    ...document,
    primary_metric: document.primary_metric && {
      ...document.primary_metric,
      name: document.primary_metric.name ?? document.primary_metric.key,
      unit: document.primary_metric.unit ?? null,
      higher_is_better: document.primary_metric.higher_is_better ?? true,
      cap_applied: document.primary_metric.cap_applied ?? null,
    },
    per_variant: posteriors(document.per_variant),
    secondary_metrics: (document.secondary_metrics ?? []).map((metric) => ({ ...metric, per_variant: posteriors(metric.per_variant) })),
    multiple_testing: document.multiple_testing ?? null,
    guardrails,
    decision,
    late_events: document.late_events ?? null,
    breakdowns: (document.breakdowns ?? []).map((breakdown) => ({
      ...breakdown,
      values: breakdown.values.map((value) => ({ ...value, label: value.label ?? value.value })),
    })),
    metric_breakdowns: document.metric_breakdowns ?? [],
    computation: document.computation ? { ...document.computation, store: document.computation.store ?? null } : null,
    planning: document.planning ?? null,
  };
  if (document.decision.recommendation) return result;
  // Stored before recommendations: derived from the snapshot's own fields, read against the plan.
  const stopped = row.trigger === 'final' || (plan?.stopped_at != null && plan.stopped_at <= row.computed_at);
  const context = { ...resolvePlan(plan), stopped };
  return { ...result, decision: { ...decision, recommendation: recommend(result, context) } };
}

/** What a snapshot stored before recommendations is read against: the experiment's rule and stop. */
export interface SnapshotPlan {
  decision_rule: Partial<DecisionRuleSettings>;
  stopped_at: number | null;
}

function resolvePlan(plan: SnapshotPlan | null) {
  const { min_sample_per_variant, max_duration_days } = recommendationContext({ decision_rule: plan?.decision_rule ?? {} }, false);
  return { min_sample_per_variant, max_duration_days };
}

export function toSnapshot(row: SnapshotRow, plan: SnapshotPlan | null = null): AnalysisSnapshot {
  const document = upgraded(JSON.parse(row.document) as SnapshotDocument, plan, row);
  return {
    id: row.id,
    experiment_id: row.experiment_id,
    computed_at: toIso(row.computed_at),
    trigger: row.trigger,
    decision_rule_satisfied: row.decision_rule_satisfied === 1,
    ...document,
  };
}

export async function insertSnapshot(executor: Executor, row: SnapshotRow): Promise<void> {
  await executor.insertInto('analysis_snapshots').values(row).execute();
}

export async function findLatestSnapshot(executor: Executor, workspaceId: string, experimentId: string): Promise<SnapshotRow | undefined> {
  return executor
    .selectFrom('analysis_snapshots')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('workspace_id', '=', workspaceId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface HistoryPage {
  limit: number;
  cursor?: string | undefined;
  since?: number | undefined;
}

export async function listSnapshots(
  executor: Executor,
  workspaceId: string,
  experimentId: string,
  page: HistoryPage,
  plan: SnapshotPlan | null,
): Promise<Page<AnalysisSnapshot>> {
  let query = executor.selectFrom('analysis_snapshots').selectAll().where('experiment_id', '=', experimentId).where('workspace_id', '=', workspaceId);
  if (page.since !== undefined) query = query.where('computed_at', '>=', page.since);
  return paginate(query, 'id', { limit: page.limit, cursor: page.cursor }, (row) => toSnapshot(row, plan), 'asc');
}

/** Peeks (results opened through the admin UI) logged for the experiment up to `upTo`. */
export async function countPeeks(executor: Executor, workspaceId: string, experimentId: string, upTo: number): Promise<number> {
  return countAuditEntries(executor, { workspaceId, targetType: 'experiment', targetId: experimentId, action: PEEK_ACTION, upTo });
}

export type AnalysisCandidate = AnalysableExperiment & { latest_computed_at: number | null };

/** Experiment ids per statement when looking up latest snapshots (well under SQLite's bound-parameter limit). */
const IDS_PER_STATEMENT = 500;

/** The computed_at of each experiment's latest snapshot (by id), for those that have one. */
async function latestComputedAt(executor: Executor, experimentIds: readonly string[]): Promise<Map<string, number>> {
  const latest = new Map<string, number>();
  for (let start = 0; start < experimentIds.length; start += IDS_PER_STATEMENT) {
    const ids = experimentIds.slice(start, start + IDS_PER_STATEMENT);
    const rows = await executor
      .selectFrom('analysis_snapshots')
      .select(['experiment_id', 'computed_at'])
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('analysis_snapshots')
          .select((inner) => inner.fn.max('id').as('id'))
          .where('experiment_id', 'in', ids)
          .groupBy('experiment_id'),
      )
      .execute();
    for (const row of rows) latest.set(row.experiment_id, Number(row.computed_at));
  }
  return latest;
}

/**
 * Running experiments, and experiments stopped since `stoppedSince`, each with the computed_at
 * of its latest snapshot. The scheduler decides from these which are due.
 */
export async function listAnalysisCandidates(executor: Executor, stoppedSince: number): Promise<AnalysisCandidate[]> {
  const experiments = await listAnalysableExperiments(executor, stoppedSince);
  const latest = await latestComputedAt(
    executor,
    experiments.map((experiment) => experiment.id),
  );
  return experiments.map((experiment) => ({ ...experiment, latest_computed_at: latest.get(experiment.id) ?? null }));
}

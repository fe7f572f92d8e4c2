import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { AnalysisSnapshotsTable } from '../../db/tables/analysis.js';
import { paginate, type Page } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import { countAuditEntries } from '../audit/read.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { AnalysisSnapshot, VariantPosterior } from './schemas.js';

export type SnapshotRow = Selectable<AnalysisSnapshotsTable>;

/** Every snapshot field except the ones kept as columns. */
export type SnapshotDocument = Omit<AnalysisSnapshot, 'id' | 'experiment_id' | 'computed_at' | 'decision_rule_satisfied' | 'trigger'>;

export const PEEK_ACTION = 'experiment.results_peeked';
export const COMPUTED_ACTION = 'experiment.results_computed';

type StoredPosterior = Omit<VariantPosterior, 'effect'> & { effect?: VariantPosterior['effect'] };

/**
 * Snapshots stored before the effects (decisions.md section 10) lack their fields; they read as
 * "no effect computed", the default direction and no cap, so every stored snapshot still fits
 * the response schema.
 */
function upgraded(document: SnapshotDocument): SnapshotDocument {
  const posteriors = (list: readonly StoredPosterior[]) => list.map((item) => ({ ...item, effect: item.effect ?? null }));
  return {
    ...document,
    primary_metric: document.primary_metric && { ...document.primary_metric, higher_is_better: document.primary_metric.higher_is_better ?? true, cap_applied: document.primary_metric.cap_applied ?? null },
    per_variant: posteriors(document.per_variant),
    guardrails: document.guardrails.map((guardrail) => ({
      ...guardrail,
      higher_is_better: guardrail.higher_is_better ?? true,
      cap_applied: guardrail.cap_applied ?? null,
      per_variant: posteriors(guardrail.per_variant),
    })),
    decision: { ...document.decision, guardrail_regressions: document.decision.guardrail_regressions ?? [] },
    breakdowns: document.breakdowns ?? [],
  };
}

export function toSnapshot(row: SnapshotRow): AnalysisSnapshot {
  const document = upgraded(JSON.parse(row.document) as SnapshotDocument);
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

export async function listSnapshots(executor: Executor, workspaceId: string, experimentId: string, page: HistoryPage): Promise<Page<AnalysisSnapshot>> {
  let query = executor
    .selectFrom('analysis_snapshots')
    .selectAll()
    .where('experiment_id', '=', experimentId)
    .where('workspace_id', '=', workspaceId);
  if (page.since !== undefined) query = query.where('computed_at', '>=', page.since);
  return paginate(query, 'id', { limit: page.limit, cursor: page.cursor }, toSnapshot, 'asc');
}

/** Peeks (results opened through the admin UI) logged for the experiment up to `upTo`. */
export async function countPeeks(executor: Executor, workspaceId: string, experimentId: string, upTo: number): Promise<number> {
  return countAuditEntries(executor, { workspaceId, targetType: 'experiment', targetId: experimentId, action: PEEK_ACTION, upTo });
}

export interface AnalysisCandidate {
  id: string;
  workspace_id: string;
  status: ExperimentRow['status'];
  decision_rule: string;
  stopped_at: number | null;
  latest_computed_at: number | null;
}

/**
 * Running experiments, and experiments stopped since `stoppedSince`, each with the computed_at
 * of its latest snapshot. The scheduler decides from these which are due.
 */
export async function listAnalysisCandidates(executor: Executor, stoppedSince: number): Promise<AnalysisCandidate[]> {
  const rows = await executor
    .selectFrom('experiments as e')
    .select((eb) => [
      'e.id',
      'e.workspace_id',
      'e.status',
      'e.decision_rule',
      'e.stopped_at',
      eb
        .selectFrom('analysis_snapshots as s')
        .select('s.computed_at')
        .whereRef('s.experiment_id', '=', 'e.id')
        .orderBy('s.id', 'desc')
        .limit(1)
        .as('latest_computed_at'),
    ])
    .where((eb) =>
      eb.or([
        eb('e.status', '=', 'running'),
        eb.and([eb('e.status', 'in', ['stopped', 'archived']), eb('e.stopped_at', '>=', stoppedSince), eb('e.started_at', 'is not', null)]),
      ]),
    )
    .orderBy('e.id')
    .execute();
  return rows.map((row) => ({ ...row, latest_computed_at: row.latest_computed_at === null ? null : Number(row.latest_computed_at) }));
}

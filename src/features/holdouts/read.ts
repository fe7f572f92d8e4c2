/**
 * The holdouts slice's read model: a stored holdout as the API shows it, and which running
 * holdouts cover an experiment (what assignment caches with the experiment's definition).
 */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { HoldoutsTable } from '../../db/tables/holdouts.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import type { HoldoutRule } from './membership.js';
import type { Holdout } from './schemas.js';

export type HoldoutRow = Selectable<HoldoutsTable>;

export function parseExperimentIds(stored: string | null): string[] | null {
  return stored === null ? null : (JSON.parse(stored) as string[]);
}

export function parseMetricIds(stored: string | null): string[] {
  return stored === null ? [] : (JSON.parse(stored) as string[]);
}

export function toHoldout(row: HoldoutRow): Holdout {
  const experimentIds = parseExperimentIds(row.experiment_ids);
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    environment_id: row.environment_id,
    name: row.name,
    description: row.description,
    unit_type: row.unit_type as Holdout['unit_type'],
    percent: Number(row.percent),
    coverage: experimentIds === null ? 'started_after' : 'listed',
    experiment_ids: experimentIds,
    metric_ids: parseMetricIds(row.metric_ids),
    variance_reduction: row.variance_reduction === null ? null : (JSON.parse(row.variance_reduction) as Holdout['variance_reduction']),
    status: row.status,
    started_at: toIsoOrNull(row.started_at),
    ended_at: toIsoOrNull(row.ended_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function findHoldout(executor: Executor, workspaceId: string, id: string): Promise<HoldoutRow | undefined> {
  return executor.selectFrom('holdouts').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function listHoldouts(executor: Executor, workspaceId: string, page: PageParams & { status?: HoldoutRow['status'] | undefined }) {
  let query = executor.selectFrom('holdouts').selectAll().where('workspace_id', '=', workspaceId);
  if (page.status) query = query.where('status', '=', page.status);
  return paginate(query, 'id', page, toHoldout);
}

/** What coverage looks at of an experiment. */
export interface CoverableExperiment {
  id: string;
  workspace_id: string;
  environment_id: string;
  unit_type: string;
  started_at: number | null;
}

/**
 * Whether a holdout covers an experiment: same environment and unit type, and either listed by id
 * or (no list) started at or after the holdout started. Opt-outs are checked by the caller.
 */
export function covers(holdout: HoldoutRow, experiment: CoverableExperiment): boolean {
  if (holdout.environment_id !== experiment.environment_id || holdout.unit_type !== experiment.unit_type) return false;
  const listed = parseExperimentIds(holdout.experiment_ids);
  if (listed !== null) return listed.includes(experiment.id);
  if (holdout.started_at === null || experiment.started_at === null || experiment.started_at < holdout.started_at) return false;
  return holdout.ended_at === null || experiment.started_at < holdout.ended_at;
}

/** The opt-out of an experiment from every holdout, or undefined. */
export async function findOptOut(executor: Executor, experimentId: string) {
  return executor.selectFrom('holdout_opt_outs').selectAll().where('experiment_id', '=', experimentId).executeTakeFirst();
}

/** The running holdouts that cover the experiment (none when it opted out), oldest first. */
export async function runningHoldoutsCovering(executor: Executor, experiment: CoverableExperiment): Promise<HoldoutRow[]> {
  const rows = await executor
    .selectFrom('holdouts')
    .selectAll()
    .where('workspace_id', '=', experiment.workspace_id)
    .where('environment_id', '=', experiment.environment_id)
    .where('status', '=', 'running')
    .orderBy('id')
    .execute();
  const covering = rows.filter((row) => covers(row, experiment));
  if (covering.length === 0 || (await findOptOut(executor, experiment.id))) return [];
  return covering;
}

/** The rules assignment evaluates for an experiment: its covering running holdouts' salts and percentages. */
export async function holdoutRulesFor(executor: Executor, experiment: CoverableExperiment): Promise<HoldoutRule[]> {
  const rows = await runningHoldoutsCovering(executor, experiment);
  return rows.map((row) => ({ id: row.id, salt: row.salt, percent: Number(row.percent), sampleSalt: row.sample_salt }));
}

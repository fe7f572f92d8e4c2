import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { ExperimentsTable, ExperimentStatus } from '../../db/tables/experiments.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { ULID_PATTERN } from '../../lib/ids.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import type { DecisionRule, Experiment, Variant, VarianceReduction } from './schemas.js';
import { experimentWarnings } from './warnings.js';

export type ExperimentRow = Selectable<ExperimentsTable>;

export function toExperiment(row: ExperimentRow): Experiment {
  const variants = JSON.parse(row.variants) as Variant[];
  const decisionRule = JSON.parse(row.decision_rule) as DecisionRule;
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    environment_id: row.environment_id,
    key: row.key,
    name: row.name,
    hypothesis: row.hypothesis,
    unit_type: row.unit_type as Experiment['unit_type'],
    status: row.status,
    variants,
    audience: row.audience === null ? null : (JSON.parse(row.audience) as Record<string, unknown>),
    decision_rule: decisionRule,
    primary_metric_id: row.primary_metric_id,
    guardrail_metric_ids: JSON.parse(row.guardrail_metric_ids) as string[],
    mutex_group_id: row.mutex_group_id,
    variance_reduction: row.variance_reduction === null ? null : (JSON.parse(row.variance_reduction) as VarianceReduction),
    dimensions: JSON.parse(row.dimensions) as string[],
    weights_changed_since_start: row.weights_changed === 1,
    started_at: toIsoOrNull(row.started_at),
    stopped_at: toIsoOrNull(row.stopped_at),
    stop_reason: row.stop_reason as Experiment['stop_reason'],
    outcome_notes: row.outcome_notes,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    warnings: experimentWarnings(decisionRule, variants),
  };
}

export async function insertExperiment(executor: Executor, row: ExperimentRow): Promise<void> {
  await executor.insertInto('experiments').values(row).execute();
}

export async function updateExperiment(executor: Executor, id: string, changes: Partial<ExperimentRow>): Promise<void> {
  await executor.updateTable('experiments').set(changes).where('id', '=', id).execute();
}

export async function findExperiment(executor: Executor, workspaceId: string, id: string): Promise<ExperimentRow | undefined> {
  return executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findExperimentByKey(executor: Executor, workspaceId: string, key: string): Promise<ExperimentRow | undefined> {
  return executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
}

/** An experiment named by id or by key: a ULID never matches the key pattern, so there is no ambiguity. */
export async function findExperimentByIdOrKey(executor: Executor, workspaceId: string, idOrKey: string) {
  return ULID_PATTERN.test(idOrKey) ? findExperiment(executor, workspaceId, idOrKey) : findExperimentByKey(executor, workspaceId, idOrKey);
}

/** Reads the row and holds it until the transaction ends, so lifecycle changes do not interleave. */
export async function lockExperiment(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<ExperimentRow | undefined> {
  const query = executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  return seam.forUpdate(query).executeTakeFirst();
}

export async function listExperiments(executor: Executor, workspaceId: string, status: ExperimentStatus | undefined, page: PageParams) {
  let query = executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId);
  if (status) query = query.where('status', '=', status);
  return paginate(query, 'id', page, toExperiment);
}

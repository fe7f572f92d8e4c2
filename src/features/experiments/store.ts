import type { Executor } from '../../db/database.js';
import type { ExperimentStatus } from '../../db/tables/experiments.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toExperiment, type ExperimentRow } from './read.js';

export async function insertExperiment(executor: Executor, row: ExperimentRow): Promise<void> {
  await executor.insertInto('experiments').values(row).execute();
}

export async function updateExperiment(executor: Executor, id: string, changes: Partial<ExperimentRow>): Promise<void> {
  await executor.updateTable('experiments').set(changes).where('id', '=', id).execute();
}

export async function listExperiments(executor: Executor, workspaceId: string, status: ExperimentStatus | undefined, page: PageParams) {
  let query = executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId);
  if (status) query = query.where('status', '=', status);
  return paginate(query, 'id', page, toExperiment);
}

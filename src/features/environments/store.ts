import type { Executor } from '../../db/database.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import type { EnvironmentRow } from './read.js';

export function toEnvironment(row: EnvironmentRow) {
  return { id: row.id, workspace_id: row.workspace_id, name: row.name, slug: row.slug, created_at: toIso(row.created_at) };
}

export async function insertEnvironment(executor: Executor, row: EnvironmentRow): Promise<void> {
  await executor.insertInto('environments').values(row).execute();
}

export async function listEnvironments(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('environments').selectAll().where('workspace_id', '=', workspaceId);
  return paginate(query, 'id', page, toEnvironment);
}

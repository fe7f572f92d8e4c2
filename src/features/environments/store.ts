import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EnvironmentsTable } from '../../db/schema.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export type EnvironmentRow = Selectable<EnvironmentsTable>;

export function toEnvironment(row: EnvironmentRow) {
  return { id: row.id, workspace_id: row.workspace_id, name: row.name, slug: row.slug, created_at: toIso(row.created_at) };
}

export async function insertEnvironment(executor: Executor, row: EnvironmentRow): Promise<void> {
  await executor.insertInto('environments').values(row).execute();
}

export async function findEnvironment(executor: Executor, workspaceId: string, id: string): Promise<EnvironmentRow | undefined> {
  return executor.selectFrom('environments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function listEnvironments(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('environments').selectAll().where('workspace_id', '=', workspaceId);
  return paginate(query, 'id', page, toEnvironment);
}

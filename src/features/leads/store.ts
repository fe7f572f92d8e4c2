import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { LeadsTable } from '../../db/tables/webhooks.js';
import { paginate } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import type { LeadListQuery } from './schemas.js';

export type LeadRow = Selectable<LeadsTable>;

export function toLead(row: LeadRow) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    task_tool_task_id: row.task_tool_task_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertLead(executor: Executor, row: LeadRow): Promise<void> {
  await executor.insertInto('leads').values(row).execute();
}

export async function updateLead(executor: Executor, workspaceId: string, id: string, changes: Updateable<LeadsTable>): Promise<void> {
  await executor.updateTable('leads').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/** The lead, locked until the transaction ends: edits and mirrored statuses apply one at a time. */
export async function lockLead(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<LeadRow | undefined> {
  return seam.forUpdate(executor.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
}

export async function lockLeadByTask(executor: Executor, seam: DialectSeam, workspaceId: string, taskId: string): Promise<LeadRow | undefined> {
  const query = executor.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('task_tool_task_id', '=', taskId);
  return seam.forUpdate(query).executeTakeFirst();
}

export async function findLead(executor: Executor, workspaceId: string, id: string): Promise<LeadRow | undefined> {
  return executor.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function listLeads(executor: Executor, workspaceId: string, query: LeadListQuery) {
  let q = executor.selectFrom('leads').selectAll().where('workspace_id', '=', workspaceId);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  if (query.task_tool_task_id !== undefined) q = q.where('task_tool_task_id', '=', query.task_tool_task_id);
  return paginate(q, 'id', query, toLead);
}

import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { WorkspacesTable } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';

export type WorkspaceRow = Selectable<WorkspacesTable>;

export function toWorkspace(row: WorkspaceRow) {
  return { id: row.id, name: row.name, slug: row.slug, created_at: toIso(row.created_at) };
}

export async function findWorkspace(executor: Executor, id: string): Promise<WorkspaceRow | undefined> {
  return executor.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function slugTaken(executor: Executor, slug: string): Promise<boolean> {
  const row = await executor.selectFrom('workspaces').select('id').where('slug', '=', slug).executeTakeFirst();
  return row !== undefined;
}

export async function insertWorkspace(executor: Executor, row: WorkspaceRow): Promise<void> {
  await executor.insertInto('workspaces').values(row).execute();
}

/** The sealed workspace webhook secret, with the workspace row locked until the transaction ends. */
export async function lockWorkspaceSecret(executor: Executor, seam: DialectSeam, workspaceId: string): Promise<string | undefined> {
  const row = await seam.forUpdate(executor.selectFrom('workspaces').select('webhook_secret_enc').where('id', '=', workspaceId)).executeTakeFirst();
  return row?.webhook_secret_enc;
}

export async function findWorkspaceSecret(executor: Executor, workspaceId: string): Promise<string | undefined> {
  const row = await executor.selectFrom('workspaces').select('webhook_secret_enc').where('id', '=', workspaceId).executeTakeFirst();
  return row?.webhook_secret_enc;
}

export async function replaceWorkspaceSecret(executor: Executor, workspaceId: string, sealed: string): Promise<void> {
  await executor.updateTable('workspaces').set({ webhook_secret_enc: sealed }).where('id', '=', workspaceId).execute();
}

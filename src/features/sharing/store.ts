import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ShareLinksTable } from '../../db/tables/people.js';

export type ShareLinkRow = Selectable<ShareLinksTable>;

export async function insertShareLink(executor: Executor, row: ShareLinkRow): Promise<void> {
  await executor.insertInto('share_links').values(row).execute();
}

export async function findShareLink(executor: Executor, workspaceId: string, id: string): Promise<ShareLinkRow | undefined> {
  return executor.selectFrom('share_links').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findShareLinkByTokenHash(executor: Executor, tokenHash: string): Promise<ShareLinkRow | undefined> {
  return executor.selectFrom('share_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function listShareLinks(executor: Executor, workspaceId: string, experimentId: string): Promise<ShareLinkRow[]> {
  return executor
    .selectFrom('share_links')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('experiment_id', '=', experimentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(200)
    .execute();
}

export async function revokeShareLink(executor: Executor, id: string, at: number): Promise<boolean> {
  const result = await executor.updateTable('share_links').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

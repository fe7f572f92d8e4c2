import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { WebhookSourcesTable } from '../../db/tables/webhooks.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { previousSecretExpiry } from '../../lib/rotating-secret.js';
import { toIso } from '../../lib/time.js';

export type WebhookSourceRow = Selectable<WebhookSourcesTable>;

export function inboundPath(workspaceId: string, slug: string): string {
  return `/webhooks/inbound/${workspaceId}/${slug}`;
}

/** The API shape; the previous secret's expiry is shown only while that secret still verifies. */
export function toWebhookSource(row: WebhookSourceRow, now: number) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    slug: row.slug,
    name: row.name,
    enabled: row.enabled === 1,
    inbound_path: inboundPath(row.workspace_id, row.slug),
    previous_secret_expires_at: previousSecretExpiry(row, now),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertWebhookSource(executor: Executor, row: WebhookSourceRow): Promise<void> {
  await executor.insertInto('webhook_sources').values(row).execute();
}

export async function updateWebhookSource(executor: Executor, workspaceId: string, id: string, changes: Updateable<WebhookSourcesTable>): Promise<void> {
  await executor.updateTable('webhook_sources').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function findWebhookSource(executor: Executor, workspaceId: string, id: string): Promise<WebhookSourceRow | undefined> {
  return executor.selectFrom('webhook_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/** The source, locked until the transaction ends, so two rotations or edits cannot interleave. */
export async function lockWebhookSource(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<WebhookSourceRow | undefined> {
  const query = executor.selectFrom('webhook_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  return seam.forUpdate(query).executeTakeFirst();
}

export async function findWebhookSourceBySlug(executor: Executor, workspaceId: string, slug: string): Promise<WebhookSourceRow | undefined> {
  return executor.selectFrom('webhook_sources').selectAll().where('workspace_id', '=', workspaceId).where('slug', '=', slug).executeTakeFirst();
}

export async function listWebhookSources(executor: Executor, workspaceId: string, page: PageParams, now: number) {
  const query = executor.selectFrom('webhook_sources').selectAll().where('workspace_id', '=', workspaceId);
  return paginate(query, 'id', page, (row) => toWebhookSource(row, now));
}

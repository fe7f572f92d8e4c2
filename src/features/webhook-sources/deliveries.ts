import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { WebhookDeliveriesTable, WebhookDeliveryOutcome } from '../../db/tables/webhooks.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;

/** Deliveries are kept this long, then purged with expired idempotency keys. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export function toWebhookDelivery(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    source_id: row.source_id,
    received_at: toIso(row.received_at),
    outcome: row.outcome,
    status_code: row.status_code,
    reason: row.reason,
    idempotency_key: row.idempotency_key,
    event_count: row.event_count,
    accepted_count: row.accepted_count,
    rejected_count: row.rejected_count,
  };
}

export async function recordDelivery(executor: Executor, delivery: WebhookDeliveryRow): Promise<void> {
  await executor.insertInto('webhook_deliveries').values(delivery).execute();
}

export async function listDeliveries(
  executor: Executor,
  workspaceId: string,
  sourceId: string,
  filters: { outcome?: WebhookDeliveryOutcome },
  page: PageParams,
) {
  let query = executor.selectFrom('webhook_deliveries').selectAll().where('workspace_id', '=', workspaceId).where('source_id', '=', sourceId);
  if (filters.outcome) query = query.where('outcome', '=', filters.outcome);
  return paginate(query, 'id', page, toWebhookDelivery, 'desc');
}

export async function purgeDeliveries(executor: Executor, receivedBefore: number): Promise<number> {
  const result = await executor.deleteFrom('webhook_deliveries').where('received_at', '<', receivedBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}

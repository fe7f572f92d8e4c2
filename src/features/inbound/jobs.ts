import { purgeAppliedHistoryItems } from '../task-tool/retention.js';
import { DELIVERY_RETENTION_MS, purgeDeliveries } from '../webhook-sources/deliveries.js';
import { purgeExpiredIdempotencyKeys } from './idempotency.js';
import type { InboundDeps } from './deps.js';

const HOUR_MS = 60 * 60 * 1000;
export const WEBHOOK_PURGE_JOB = 'webhooks.purge_expired';

/** Removes forgotten idempotency keys, old deliveries and old applied history items. */
export async function purgeExpiredWebhookRecords(ctx: InboundDeps): Promise<{ idempotency_keys: number; deliveries: number; history_items: number }> {
  const now = ctx.clock.now();
  return {
    idempotency_keys: await purgeExpiredIdempotencyKeys(ctx.db, now),
    deliveries: await purgeDeliveries(ctx.db, now - DELIVERY_RETENTION_MS),
    history_items: await purgeAppliedHistoryItems(ctx.db, now),
  };
}

/** Wires the inbound webhooks' purge into the queue (createInbound's registerJobs, called from app/jobs.ts). */
export function registerWebhookJobs(ctx: InboundDeps): void {
  ctx.jobs.register(WEBHOOK_PURGE_JOB, async (_payload, { logger }) => {
    logger.info(await purgeExpiredWebhookRecords(ctx), 'purged expired webhook records');
  });
  ctx.jobs.every(WEBHOOK_PURGE_JOB, HOUR_MS);
}

import type { Executor } from '../../db/database.js';
import { purgeHistoryItems } from './store.js';

const HOUR_MS = 60 * 60 * 1000;
/** Applied task-tool history items are remembered this long; the tool redelivers within hours. */
export const HISTORY_ITEM_RETENTION_MS = 30 * 24 * HOUR_MS;

/** Forgets applied history items older than the retention (run by the webhook purge job, inbound/jobs.ts). */
export async function purgeAppliedHistoryItems(executor: Executor, now: number): Promise<number> {
  return purgeHistoryItems(executor, now - HISTORY_ITEM_RETENTION_MS);
}

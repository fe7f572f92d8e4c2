import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { TaskToolSettingsTable } from '../../db/tables/webhooks.js';

export type TaskToolSettingsRow = Selectable<TaskToolSettingsTable>;
export type StatusMapping = Record<string, string>;

export function parseMapping(text: string): StatusMapping {
  return JSON.parse(text) as StatusMapping;
}

export async function findSettings(executor: Executor, workspaceId: string): Promise<TaskToolSettingsRow | undefined> {
  return executor.selectFrom('task_tool_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/** Saves the mapping, creating the settings row on first use. */
export async function saveMapping(executor: Executor, workspaceId: string, mapping: StatusMapping, now: number): Promise<void> {
  const statusMapping = JSON.stringify(mapping);
  await executor
    .insertInto('task_tool_settings')
    .values({ workspace_id: workspaceId, status_mapping: statusMapping, previous_secret_enc: null, previous_secret_expires_at: null, updated_at: now })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ status_mapping: statusMapping, updated_at: now }))
    .execute();
}

/** Remembers the replaced workspace webhook secret (sealed) and until when it verifies. */
export async function savePreviousSecret(executor: Executor, workspaceId: string, sealed: string, expiresAt: number, now: number): Promise<void> {
  await executor
    .insertInto('task_tool_settings')
    .values({ workspace_id: workspaceId, status_mapping: '{}', previous_secret_enc: sealed, previous_secret_expires_at: expiresAt, updated_at: now })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ previous_secret_enc: sealed, previous_secret_expires_at: expiresAt, updated_at: now }))
    .execute();
}

/**
 * Marks history items as applied and returns the ids that were new. The primary key decides:
 * of two jobs applying the same item at once, only one gets it back.
 */
export async function claimHistoryItems(executor: Executor, workspaceId: string, taskId: string, itemIds: string[], now: number): Promise<Set<string>> {
  if (itemIds.length === 0) return new Set();
  const rows = await executor
    .insertInto('task_tool_history_items')
    .values(itemIds.map((itemId) => ({ workspace_id: workspaceId, item_id: itemId, task_id: taskId, processed_at: now })))
    .onConflict((oc) => oc.columns(['workspace_id', 'item_id']).doNothing())
    .returning('item_id')
    .execute();
  return new Set(rows.map((row) => row.item_id));
}

export async function purgeHistoryItems(executor: Executor, processedBefore: number): Promise<number> {
  const result = await executor.deleteFrom('task_tool_history_items').where('processed_at', '<', processedBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}

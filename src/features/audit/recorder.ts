import type { Executor } from '../../db/database.js';
import { newId } from '../../lib/ids.js';

// The one write other slices make into the audit slice (shared by design): the entry for a change,
// written in the transaction of that change.

export interface AuditRecord {
  workspaceId: string;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string;
  payload: Record<string, unknown>;
  at: number;
}

/** Call with the transaction that makes the change, so the entry and the change commit together. */
export async function recordAudit(executor: Executor, record: AuditRecord): Promise<void> {
  await executor
    .insertInto('audit_entries')
    .values({
      id: newId(),
      workspace_id: record.workspaceId,
      actor_id: record.actorId,
      action: record.action,
      target_type: record.targetType,
      target_id: record.targetId,
      payload: JSON.stringify(record.payload),
      created_at: record.at,
    })
    .execute();
}

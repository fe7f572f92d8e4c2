/** The audit slice's read model: what other slices may ask of the audit log. */
import type { Executor } from '../../db/database.js';

export interface AuditCountQuery {
  workspaceId: string;
  targetType: string;
  targetId: string;
  action: string;
  /** Entries recorded at or before this time. */
  upTo: number;
}

/** How many entries of one action the log holds for one target (the analysis counts peeks). */
export async function countAuditEntries(executor: Executor, query: AuditCountQuery): Promise<number> {
  const row = await executor
    .selectFrom('audit_entries')
    .select((eb) => eb.fn.countAll<number>().as('entries'))
    .where('workspace_id', '=', query.workspaceId)
    .where('target_type', '=', query.targetType)
    .where('target_id', '=', query.targetId)
    .where('action', '=', query.action)
    .where('created_at', '<=', query.upTo)
    .executeTakeFirst();
  return Number(row?.entries ?? 0);
}

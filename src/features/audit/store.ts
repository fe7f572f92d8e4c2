import type { Executor } from '../../db/database.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export interface AuditFilters {
  action?: string;
  target_type?: string;
  target_id?: string;
  actor_id?: string;
  /** system: entries with no API key behind them (actor_id null). */
  actor_type?: 'api_key' | 'system';
  since?: number;
  until?: number;
}

export async function listAudit(executor: Executor, workspaceId: string, filters: AuditFilters, page: PageParams) {
  let query = executor.selectFrom('audit_entries').selectAll().where('workspace_id', '=', workspaceId);
  if (filters.action) query = query.where('action', '=', filters.action);
  if (filters.target_type) query = query.where('target_type', '=', filters.target_type);
  if (filters.target_id) query = query.where('target_id', '=', filters.target_id);
  if (filters.actor_id) query = query.where('actor_id', '=', filters.actor_id);
  if (filters.actor_type === 'system') query = query.where('actor_id', 'is', null);
  if (filters.actor_type === 'api_key') query = query.where('actor_id', 'is not', null);
  if (filters.since !== undefined) query = query.where('created_at', '>=', filters.since);
  if (filters.until !== undefined) query = query.where('created_at', '<', filters.until);
  return paginate(
    query,
    'id',
    page,
    (row) => ({
      id: row.id,
      action: row.action,
      target_type: row.target_type,
      target_id: row.target_id,
      actor_id: row.actor_id,
      payload: JSON.parse(row.payload) as Record<string, unknown>,
      created_at: toIso(row.created_at),
    }),
    'desc',
  );
}

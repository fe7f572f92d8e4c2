import type { Executor } from '../../db/database.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export interface AuditFilters {
  action?: string;
  target_type?: string;
  target_id?: string;
  actor_id?: string;
  /** system: entries with no API key or person behind them (actor_id null). */
  actor_type?: 'api_key' | 'user' | 'system';
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
  if (filters.actor_type === 'api_key')
    query = query.where('actor_id', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('workspace_id', '=', workspaceId));
  if (filters.actor_type === 'user') query = query.where('actor_id', 'in', (eb) => eb.selectFrom('users').select('id').where('workspace_id', '=', workspaceId));
  if (filters.since !== undefined) query = query.where('created_at', '>=', filters.since);
  if (filters.until !== undefined) query = query.where('created_at', '<', filters.until);
  const found = await paginate(
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
  const actors = await actorsOf(
    executor,
    workspaceId,
    found.data.map((entry) => entry.actor_id),
  );
  return { ...found, data: found.data.map((entry) => ({ ...entry, actor: (entry.actor_id && actors.get(entry.actor_id)) || SYSTEM_OR_GONE(entry.actor_id) })) };
}

export interface AuditActor {
  type: 'user' | 'api_key' | 'system';
  id: string | null;
  /** The person's name (their email before they gave one) or the key's name. */
  name: string | null;
  /** A person's email address; null for keys and the system. */
  email: string | null;
}

const SYSTEM_OR_GONE = (id: string | null): AuditActor => ({ type: id === null ? 'system' : 'api_key', id, name: null, email: null });

/** Who the page's entries name: people and keys of this workspace, by id. */
async function actorsOf(executor: Executor, workspaceId: string, ids: (string | null)[]): Promise<Map<string, AuditActor>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const actors = new Map<string, AuditActor>();
  if (wanted.length === 0) return actors;
  const keys = await executor.selectFrom('api_keys').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', wanted).execute();
  for (const key of keys) actors.set(key.id, { type: 'api_key', id: key.id, name: key.name, email: null });
  const users = await executor.selectFrom('users').select(['id', 'name', 'email']).where('workspace_id', '=', workspaceId).where('id', 'in', wanted).execute();
  for (const user of users) actors.set(user.id, { type: 'user', id: user.id, name: user.name ?? user.email, email: user.email });
  return actors;
}

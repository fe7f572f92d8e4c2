/** The API keys slice's read model: what other slices may know of a key. */
import type { Executor } from '../../db/database.js';

/** The names of the workspace's keys among `ids` (revoked ones too), by id; unknown ids are absent. */
export async function apiKeyNames(executor: Executor, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await executor.selectFrom('api_keys').select(['id', 'name']).where('workspace_id', '=', workspaceId).where('id', 'in', wanted).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

import type { Executor } from '../../db/database.js';

/** Keys of the running experiments a key can see (its environment's, or all when unbound). */
export async function listRunningExperiments(executor: Executor, workspaceId: string, environmentId: string | null): Promise<string[]> {
  let query = executor.selectFrom('experiments').select('key').where('workspace_id', '=', workspaceId).where('status', '=', 'running');
  if (environmentId) query = query.where('environment_id', '=', environmentId);
  const rows = await query.orderBy('key').limit(500).execute();
  return rows.map((row) => row.key);
}

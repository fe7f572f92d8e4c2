import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ApiKeysTable } from '../../db/schema.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

export function toApiKey(row: ApiKeyRow, pendingUse?: number) {
  const lastUsed = Math.max(row.last_used_at ?? 0, pendingUse ?? 0) || null;
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    environment_id: row.environment_id,
    name: row.name,
    kind: row.kind,
    prefix: row.prefix,
    last_four: row.last_four,
    created_at: toIso(row.created_at),
    last_used_at: toIsoOrNull(lastUsed),
    revoked_at: toIsoOrNull(row.revoked_at),
  };
}

export async function insertApiKey(executor: Executor, row: ApiKeyRow): Promise<void> {
  await executor.insertInto('api_keys').values(row).execute();
}

export async function findApiKey(executor: Executor, workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
  return executor.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function markRevoked(executor: Executor, workspaceId: string, id: string, at: number): Promise<boolean> {
  const result = await executor
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function listApiKeys(
  executor: Executor,
  workspaceId: string,
  options: PageParams & { include_revoked?: boolean },
  pendingUse: (keyId: string) => number | undefined,
) {
  let query = executor.selectFrom('api_keys').selectAll().where('workspace_id', '=', workspaceId);
  if (!options.include_revoked) query = query.where('revoked_at', 'is', null);
  return paginate(query, 'id', options, (row) => toApiKey(row, pendingUse(row.id)));
}

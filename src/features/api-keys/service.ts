import type { Executor } from '../../db/database.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import { findEnvironment } from '../environments/read.js';
import type { ApiKeysDeps } from './deps.js';
import { issueKey } from './key-format.js';
import type { ApiKeyInput } from './schemas.js';
import { findApiKey, insertApiKey, markRevoked, toApiKey } from './store.js';

/** Issues, stores (hashed) and audits a key inside the caller's transaction; returns it with its secret. */
export async function addApiKey(executor: Executor, workspaceId: string, input: ApiKeyInput, actorId: string | null, now: number) {
  let environmentSlug: string | null = null;
  if (input.environment_id) {
    const environment = await findEnvironment(executor, workspaceId, input.environment_id);
    if (!environment) {
      throw problems.validation([{ pointer: '/environment_id', message: 'no environment with this id exists in the workspace' }]);
    }
    environmentSlug = environment.slug;
  }
  const issued = issueKey(input.kind, environmentSlug);
  const row = {
    id: newId(),
    workspace_id: workspaceId,
    environment_id: input.environment_id ?? null,
    name: input.name,
    kind: input.kind,
    prefix: issued.prefix,
    last_four: issued.lastFour,
    key_hash: issued.hash,
    created_at: now,
    last_used_at: null,
    revoked_at: null,
  };
  await insertApiKey(executor, row);
  await recordAudit(executor, {
    workspaceId,
    actorId,
    action: 'api_key.created',
    targetType: 'api_key',
    targetId: row.id,
    payload: { name: row.name, kind: row.kind, environment_id: row.environment_id, prefix: row.prefix, last_four: row.last_four },
    at: now,
  });
  return { ...toApiKey(row), key: issued.key };
}

export async function createApiKey(ctx: ApiKeysDeps, workspaceId: string, actorId: string, input: ApiKeyInput) {
  return ctx.db.transaction().execute((trx) => addApiKey(trx, workspaceId, input, actorId, ctx.clock.now()));
}

/** Revocation is idempotent: revoking a revoked key answers the same and records nothing new. */
export async function revokeApiKey(ctx: ApiKeysDeps, workspaceId: string, actorId: string, keyId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const key = await findApiKey(trx, workspaceId, keyId);
    if (!key) throw problems.notFound(`no API key with id ${keyId}`);
    const now = ctx.clock.now();
    if (!(await markRevoked(trx, workspaceId, keyId, now))) return;
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'api_key.revoked',
      targetType: 'api_key',
      targetId: keyId,
      payload: { name: key.name, prefix: key.prefix, last_four: key.last_four },
      at: now,
    });
  });
  ctx.changes.publish({ topic: 'api_key', workspaceId, id: keyId });
}

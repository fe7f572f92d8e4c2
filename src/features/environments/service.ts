import type { Executor } from '../../db/database.js';
import { uniqueViolationAs } from '../../db/dialect.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { UNBOUND_ENVIRONMENT } from '../api-keys/key-format.js';
import { recordAudit } from '../audit/recorder.js';
import type { EnvironmentsDeps } from './deps.js';
import type { EnvironmentInput } from './schemas.js';
import type { EnvironmentRow } from './read.js';
import { insertEnvironment, toEnvironment } from './store.js';

/** Inserts and audits one environment inside the caller's transaction. */
export async function addEnvironment(executor: Executor, workspaceId: string, input: EnvironmentInput, actorId: string | null, now: number) {
  if (input.slug === UNBOUND_ENVIRONMENT) {
    throw problems.validation([{ pointer: '/slug', message: `"${UNBOUND_ENVIRONMENT}" is reserved for keys bound to no environment` }]);
  }
  const row: EnvironmentRow = { id: newId(), workspace_id: workspaceId, name: input.name, slug: input.slug, created_at: now };
  await insertEnvironment(executor, row);
  await recordAudit(executor, {
    workspaceId,
    actorId,
    action: 'environment.created',
    targetType: 'environment',
    targetId: row.id,
    payload: { name: row.name, slug: row.slug },
    at: now,
  });
  return toEnvironment(row);
}

export async function createEnvironment(ctx: EnvironmentsDeps, workspaceId: string, actorId: string, input: EnvironmentInput) {
  return uniqueViolationAs(
    ctx.seam,
    () => ctx.db.transaction().execute((trx) => addEnvironment(trx, workspaceId, input, actorId, ctx.clock.now())),
    () => problems.keyTaken(`an environment with slug "${input.slug}" already exists in this workspace`),
  );
}

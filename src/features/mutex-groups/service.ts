import { uniqueViolationAs } from '../../db/dialect.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import type { MutexGroupsDeps } from './deps.js';
import type { MutexGroupInput } from './schemas.js';
import { insertMutexGroup } from './store.js';

export async function createMutexGroup(ctx: MutexGroupsDeps, workspaceId: string, actorId: string, input: MutexGroupInput) {
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const now = ctx.clock.now();
        const row = { id: newId(), workspace_id: workspaceId, key: input.key, name: input.name, created_at: now };
        await insertMutexGroup(trx, row);
        await recordAudit(trx, {
          workspaceId,
          actorId,
          action: 'mutex_group.created',
          targetType: 'mutex_group',
          targetId: row.id,
          payload: { key: row.key, name: row.name },
          at: now,
        });
        return { id: row.id, key: row.key, name: row.name, experiment_count: 0, created_at: toIso(now) };
      }),
    () => problems.keyTaken(`a mutex group with key "${input.key}" already exists in this workspace`),
  );
}

import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { HoldoutRow } from './read.js';

export async function insertHoldout(executor: Executor, row: HoldoutRow): Promise<void> {
  await executor.insertInto('holdouts').values(row).execute();
}

export async function updateHoldout(executor: Executor, id: string, changes: Partial<HoldoutRow>): Promise<void> {
  await executor.updateTable('holdouts').set(changes).where('id', '=', id).execute();
}

/** Reads the holdout and holds it until the transaction ends, so changes do not interleave. */
export async function lockHoldout(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<HoldoutRow | undefined> {
  return seam.forUpdate(executor.selectFrom('holdouts').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
}

export async function upsertOptOut(
  executor: Executor,
  row: { experiment_id: string; workspace_id: string; reason: string; created_at: number },
): Promise<void> {
  await executor
    .insertInto('holdout_opt_outs')
    .values(row)
    .onConflict((oc) => oc.column('experiment_id').doUpdateSet({ reason: row.reason, created_at: row.created_at }))
    .execute();
}

export async function deleteOptOut(executor: Executor, experimentId: string): Promise<boolean> {
  const result = await executor.deleteFrom('holdout_opt_outs').where('experiment_id', '=', experimentId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The workspace's experiments in an environment with a unit type, for coverage (a holdout covers some of them). */
export async function experimentsIn(executor: Executor, workspaceId: string, environmentId: string, unitType: string) {
  return executor
    .selectFrom('experiments as e')
    .leftJoin('holdout_opt_outs as o', 'o.experiment_id', 'e.id')
    .select([
      'e.id',
      'e.workspace_id',
      'e.environment_id',
      'e.unit_type',
      'e.key',
      'e.name',
      'e.status',
      'e.started_at',
      'e.stopped_at',
      'e.launched_variant_key',
      'e.launched_at',
      'o.reason as opt_out_reason',
      'o.created_at as opted_out_at',
    ])
    .where('e.workspace_id', '=', workspaceId)
    .where('e.environment_id', '=', environmentId)
    .where('e.unit_type', '=', unitType)
    .orderBy('e.started_at')
    .orderBy('e.id')
    .execute();
}

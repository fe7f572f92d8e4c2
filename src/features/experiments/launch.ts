/**
 * Launches: a stopped experiment keeps serving one of its variants to every unit of its
 * environment and audience (assign, batch and OFREP answer it with reason "launched", with no
 * sticky row and no exposure) until it is archived. Launching another variant replaces it.
 */
import Type, { type Static } from 'typebox';
import type { Tx } from '../../db/database.js';
import { problems } from '../../http/problems.js';
import { recordAudit } from '../audit/recorder.js';
import type { ExperimentsDeps } from './deps.js';
import { lockExperiment, toExperiment, type ExperimentRow } from './read.js';
import type { Experiment } from './schemas.js';
import { VARIANT_KEY_PATTERN } from './schemas.js';
import { updateExperiment } from './store.js';

export const LaunchExperimentInput = Type.Object(
  {
    variant_key: Type.String({ pattern: VARIANT_KEY_PATTERN, description: 'the variant every unit gets from now on; one of the experiment’s variants' }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'why it is launched (kept with the experiment and in the audit log)' })),
  },
  { additionalProperties: false },
);
export type LaunchExperimentInput = Static<typeof LaunchExperimentInput>;

/** A new experiment's launch columns: nothing launched. */
export const NOT_LAUNCHED = { launched_variant_key: null, launched_at: null, launch_reason: null } as const;

interface Actor {
  workspaceId: string;
  actorId: string;
}

/** Launches `variant_key` on a stopped experiment under its row lock, audited in the same transaction. */
export async function launchExperiment(ctx: ExperimentsDeps, actor: Actor, id: string, input: LaunchExperimentInput): Promise<Experiment> {
  const launched = await ctx.db.transaction().execute(async (trx) => {
    const row = await lockExperiment(trx, ctx.seam, actor.workspaceId, id);
    if (!row) throw problems.notFound(`no experiment with id ${id}`);
    return launchInTransaction(trx, actor, row, input, ctx.clock.now());
  });
  ctx.changes.publish({ topic: 'experiment', workspaceId: launched.workspace_id, id: launched.id, keys: [launched.key] });
  return launched;
}

/**
 * The launch itself, in the caller's transaction with the row locked (a launch request, or a stop
 * that names `launch_variant_key`): a 422 or 409 here rolls back the whole request. The caller
 * publishes the change after the commit.
 */
export async function launchInTransaction(trx: Tx, actor: Actor, row: ExperimentRow, input: LaunchExperimentInput, now: number): Promise<Experiment> {
  assertLaunchable(row, input.variant_key);
  const reason = input.reason ?? null;
  if (row.launched_variant_key === input.variant_key && row.launch_reason === reason) return toExperiment(row);
  const changes: Partial<ExperimentRow> = { launched_variant_key: input.variant_key, launched_at: now, launch_reason: reason, updated_at: now };
  await updateExperiment(trx, row.id, changes);
  await recordAudit(trx, {
    ...actor,
    action: 'experiment.launched',
    targetType: 'experiment',
    targetId: row.id,
    payload: { experiment_key: row.key, variant_key: input.variant_key, previous_variant_key: row.launched_variant_key, reason },
    at: now,
  });
  return toExperiment({ ...row, ...changes });
}

function assertLaunchable(row: ExperimentRow, variantKey: string): void {
  if (row.status !== 'stopped') {
    throw problems.lifecycleMoveNotAllowed(`only a stopped experiment can launch a variant; "${row.key}" is ${row.status}`);
  }
  const keys = toExperiment(row).variants.map((variant) => variant.key);
  if (!keys.includes(variantKey)) {
    throw problems.validation([{ pointer: '/variant_key', message: `must be one of ${keys.map((key) => `"${key}"`).join(', ')}` }]);
  }
}

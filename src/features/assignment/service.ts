import { problems } from '../../http/problems.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { findExperimentByIdOrKey, lockExperiment, parseVariants } from '../experiments/read.js';
import type { AssignmentDeps } from './deps.js';
import type { Assignment } from './schemas.js';
import { deleteAssignmentAndSupersede, deleteOverride, listUnitAssignments, upsertOverride } from './store.js';

interface Actor {
  workspaceId: string;
  actorId: string;
}

export async function listAssignmentsOfUnit(ctx: AssignmentDeps, workspaceId: string, unitId: string): Promise<{ unit_id: string; assignments: Assignment[] }> {
  const rows = await listUnitAssignments(ctx.db, workspaceId, unitId);
  return {
    unit_id: unitId,
    assignments: rows.map((row) => ({
      experiment_key: row.experiment_key,
      unit_id: unitId,
      variant: row.variant_key,
      reason: row.reason,
      assignment_id: row.id,
      exposure_logged_at: toIsoOrNull(row.exposure_logged_at),
    })),
  };
}

/**
 * Forced re-bucket: removes the stored assignment and supersedes the pair's exposures in one
 * audited transaction, so the analysis ignores them and the next assign buckets afresh.
 */
export async function rebucket(ctx: AssignmentDeps, actor: Actor, experimentRef: string, unitId: string): Promise<void> {
  const experiment = await findExperimentByIdOrKey(ctx.db, actor.workspaceId, experimentRef);
  if (!experiment) throw problems.notFound(`no experiment with id or key "${experimentRef}"`);
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const outcome = await deleteAssignmentAndSupersede(trx, experiment.id, unitId, now);
    if (!outcome) throw problems.notFound(`unit "${unitId}" has no assignment in experiment "${experiment.key}"`);
    await recordAudit(trx, {
      ...actor,
      action: 'assignment.rebucketed',
      targetType: 'experiment',
      targetId: experiment.id,
      payload: {
        experiment_key: experiment.key,
        unit_id: unitId,
        previous_variant: outcome.removed.variant_key,
        superseded_exposures: outcome.supersededExposures,
      },
      at: now,
    });
  });
  ctx.changes.publish({ topic: 'assignment', workspaceId: actor.workspaceId, experimentId: experiment.id, unitId });
}

export async function setOverride(ctx: AssignmentDeps, actor: Actor, experimentId: string, unitId: string, variant: string) {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const experiment = await lockExperiment(trx, ctx.seam, actor.workspaceId, experimentId);
    if (!experiment) throw problems.notFound(`no experiment with id ${experimentId}`);
    if (experiment.status === 'archived') throw problems.experimentNotEditable('an archived experiment takes no overrides');
    const variants = parseVariants(experiment.variants);
    if (!variants.some((v) => v.key === variant)) {
      throw problems.validation([{ pointer: '/variant', message: `must be one of ${variants.map((v) => `"${v.key}"`).join(', ')}` }]);
    }
    const now = ctx.clock.now();
    await upsertOverride(trx, { experiment_id: experiment.id, unit_id: unitId, workspace_id: actor.workspaceId, variant_key: variant, created_at: now });
    await recordAudit(trx, {
      ...actor,
      action: 'experiment.override_set',
      targetType: 'experiment',
      targetId: experiment.id,
      payload: { unit_id: unitId, variant },
      at: now,
    });
    return { experiment, now };
  });
  ctx.changes.publish({ topic: 'experiment', workspaceId: actor.workspaceId, id: result.experiment.id, keys: [result.experiment.key] });
  return { experiment_id: result.experiment.id, unit_id: unitId, variant, created_at: toIso(result.now) };
}

export async function removeOverride(ctx: AssignmentDeps, actor: Actor, experimentId: string, unitId: string): Promise<void> {
  const experiment = await ctx.db.transaction().execute(async (trx) => {
    const row = await lockExperiment(trx, ctx.seam, actor.workspaceId, experimentId);
    if (!row) throw problems.notFound(`no experiment with id ${experimentId}`);
    const removed = await deleteOverride(trx, row.id, unitId);
    if (removed === null) throw problems.notFound(`unit "${unitId}" has no override in this experiment`);
    const now = ctx.clock.now();
    await recordAudit(trx, {
      ...actor,
      action: 'experiment.override_removed',
      targetType: 'experiment',
      targetId: row.id,
      payload: { unit_id: unitId, variant: removed },
      at: now,
    });
    return row;
  });
  ctx.changes.publish({ topic: 'experiment', workspaceId: actor.workspaceId, id: experiment.id, keys: [experiment.key] });
}

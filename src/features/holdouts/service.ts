import { randomBytes } from 'node:crypto';
import type { Executor, Tx } from '../../db/database.js';
import type { FieldError } from '../../http/problems.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import { findEnvironment } from '../environments/read.js';
import { findExperiment } from '../experiments/read.js';
import { normalizeVarianceReduction } from '../experiments/rules.js';
import { findMetricsByIds } from '../metrics/read.js';
import type { HoldoutsDeps } from './deps.js';
import { heldOutBuckets } from './membership.js';
import { covers, findHoldout, findOptOut, parseExperimentIds, runningHoldoutsCovering, toHoldout, type HoldoutRow } from './read.js';
import type { Holdout, HoldoutInput, HoldoutPatch, OptOutInput } from './schemas.js';
import { deleteOptOut, experimentsIn, insertHoldout, lockHoldout, updateHoldout, upsertOptOut } from './store.js';

interface Actor {
  workspaceId: string;
  actorId: string;
}

async function audit(trx: Tx, actor: Actor, action: string, targetType: string, targetId: string, payload: Record<string, unknown>, at: number) {
  await recordAudit(trx, { ...actor, action, targetType, targetId, payload, at });
}

/** Assignment's cached definitions carry their holdouts: any change here may change them. */
function publish(ctx: HoldoutsDeps, workspaceId: string): void {
  ctx.changes.publish({ topic: 'holdout', workspaceId });
}

const salt = () => randomBytes(12).toString('hex');

/**
 * Each metric must be the workspace's, and of a kind the holdout's analysis estimates: it compares
 * means and rates (a quantile's interval needs every value, which the holdout's totals do not read).
 */
async function metricErrors(trx: Tx, workspaceId: string, ids: readonly string[] | undefined): Promise<FieldError[]> {
  if (!ids || ids.length === 0) return [];
  const kinds = new Map((await findMetricsByIds(trx, workspaceId, ids)).map((metric) => [metric.id, metric.kind as string]));
  return ids.flatMap((id, index) => {
    const kind = kinds.get(id);
    if (kind === undefined) return [{ pointer: `/metric_ids/${index}`, message: 'no such metric in this workspace' }];
    if (kind === 'quantile')
      return [
        { pointer: `/metric_ids/${index}`, message: 'a holdout cannot analyse a quantile metric yet; choose a binary, count, sum, mean or ratio metric' },
      ];
    return [];
  });
}

const serializeVarianceReduction = (input: HoldoutInput['variance_reduction']) => {
  const normalized = normalizeVarianceReduction(input);
  return normalized === null ? null : JSON.stringify(normalized);
};

async function referenceErrors(trx: Tx, workspaceId: string, holdout: Pick<HoldoutRow, 'environment_id' | 'unit_type'>, ids: readonly string[] | null) {
  const errors: FieldError[] = [];
  if (!(await findEnvironment(trx, workspaceId, holdout.environment_id)))
    errors.push({ pointer: '/environment_id', message: 'no such environment in this workspace' });
  for (const [index, id] of (ids ?? []).entries()) {
    const experiment = await findExperiment(trx, workspaceId, id);
    const pointer = `/experiment_ids/${index}`;
    if (!experiment) errors.push({ pointer, message: 'no such experiment in this workspace' });
    else if (experiment.environment_id !== holdout.environment_id)
      errors.push({ pointer, message: `experiment "${experiment.key}" is in another environment` });
    else if (experiment.unit_type !== holdout.unit_type)
      errors.push({ pointer, message: `experiment "${experiment.key}" assigns ${experiment.unit_type} units, not ${holdout.unit_type}` });
  }
  return errors;
}

function percentErrors(percent: number): FieldError[] {
  return Math.abs(heldOutBuckets(percent) - percent * 100) > 1e-6 ? [{ pointer: '/percent', message: 'must have at most two decimals' }] : [];
}

export async function createHoldout(ctx: HoldoutsDeps, actor: Actor, input: HoldoutInput): Promise<Holdout> {
  const shapeErrors = percentErrors(input.percent);
  if (shapeErrors.length > 0) throw problems.validation(shapeErrors);
  return ctx.db.transaction().execute(async (trx) => {
    const ids = input.experiment_ids ?? null;
    const errors = [...(await referenceErrors(trx, actor.workspaceId, input, ids)), ...(await metricErrors(trx, actor.workspaceId, input.metric_ids))];
    if (errors.length > 0) throw problems.validation(errors);
    const now = ctx.clock.now();
    const row: HoldoutRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      environment_id: input.environment_id,
      name: input.name,
      description: input.description ?? null,
      unit_type: input.unit_type,
      percent: input.percent,
      experiment_ids: ids === null ? null : JSON.stringify(ids),
      status: 'draft',
      salt: salt(),
      sample_salt: salt(),
      started_at: null,
      ended_at: null,
      created_at: now,
      updated_at: now,
      metric_ids: input.metric_ids && input.metric_ids.length > 0 ? JSON.stringify(input.metric_ids) : null,
      variance_reduction: serializeVarianceReduction(input.variance_reduction),
    };
    await insertHoldout(trx, row);
    const created = toHoldout(row);
    await audit(trx, actor, 'holdout.created', 'holdout', row.id, { holdout: created }, now);
    return created;
  });
}

async function loadForChange(ctx: HoldoutsDeps, trx: Tx, actor: Actor, id: string): Promise<HoldoutRow> {
  const row = await lockHoldout(trx, ctx.seam, actor.workspaceId, id);
  if (!row) throw problems.notFound(`no holdout with id ${id}`);
  return row;
}

// The metrics and CUPED only change how its snapshots are computed, not who is held out.
const RUNNING_EDITABLE = new Set(['name', 'description', 'percent', 'metric_ids', 'variance_reduction']);

/** Drafts change freely; a running holdout its name, description and a larger percentage; ended and archived ones nothing. */
function assertPatchAllowed(row: HoldoutRow, patch: HoldoutPatch): void {
  const fields = Object.keys(patch);
  if (row.status === 'draft' || fields.length === 0) return;
  if (row.status !== 'running') throw problems.holdoutNotEditable(`an ${row.status} holdout cannot change`);
  const frozen = fields.filter((field) => !RUNNING_EDITABLE.has(field));
  if (frozen.length > 0)
    throw problems.holdoutNotEditable(
      `a running holdout cannot change ${frozen.join(', ')}; only name, description, a larger percent, metric_ids and variance_reduction`,
    );
  if (patch.percent !== undefined && patch.percent < Number(row.percent)) {
    throw problems.holdoutNotEditable(`a running holdout’s percent can only grow (it is ${Number(row.percent)}): a smaller one would release held-out units`);
  }
}

export async function patchHoldout(ctx: HoldoutsDeps, actor: Actor, id: string, patch: HoldoutPatch): Promise<Holdout> {
  if (patch.percent !== undefined && percentErrors(patch.percent).length > 0) throw problems.validation(percentErrors(patch.percent));
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await loadForChange(ctx, trx, actor, id);
    assertPatchAllowed(row, patch);
    const changes: Partial<HoldoutRow> = {};
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    if (patch.percent !== undefined) changes.percent = patch.percent;
    if (patch.unit_type !== undefined) changes.unit_type = patch.unit_type;
    if (patch.environment_id !== undefined) changes.environment_id = patch.environment_id;
    if (patch.experiment_ids !== undefined) changes.experiment_ids = patch.experiment_ids === null ? null : JSON.stringify(patch.experiment_ids);
    if (patch.metric_ids !== undefined) changes.metric_ids = patch.metric_ids.length > 0 ? JSON.stringify(patch.metric_ids) : null;
    if (patch.variance_reduction !== undefined) changes.variance_reduction = serializeVarianceReduction(patch.variance_reduction);
    const next = { ...row, ...changes };
    const referencesChanged = patch.experiment_ids !== undefined || patch.unit_type !== undefined || patch.environment_id !== undefined;
    const errors = [
      ...(referencesChanged ? await referenceErrors(trx, actor.workspaceId, next, parseExperimentIds(next.experiment_ids)) : []),
      ...(await metricErrors(trx, actor.workspaceId, patch.metric_ids)),
    ];
    if (errors.length > 0) throw problems.validation(errors);
    const before = toHoldout(row);
    const after = toHoldout(next);
    const changed = Object.keys(changes).filter((field) => JSON.stringify(before[field as keyof Holdout]) !== JSON.stringify(after[field as keyof Holdout]));
    if (changed.length === 0) return { holdout: before, changed: false };
    const now = ctx.clock.now();
    await updateHoldout(trx, row.id, { ...changes, updated_at: now });
    const diff = Object.fromEntries(changed.map((field) => [field, { from: before[field as keyof Holdout], to: after[field as keyof Holdout] }]));
    await audit(trx, actor, 'holdout.updated', 'holdout', row.id, { changes: diff }, now);
    return { holdout: { ...after, updated_at: toIso(now) }, changed: true };
  });
  if (result.changed) publish(ctx, actor.workspaceId);
  return result.holdout;
}

type Move = 'start' | 'end' | 'archive';

function moveChanges(row: HoldoutRow, move: Move, now: number): Partial<HoldoutRow> | null {
  if (move === 'start') {
    if (row.status !== 'draft') throw problems.lifecycleMoveNotAllowed(`only a draft holdout can start; this one is ${row.status}`);
    return { status: 'running', started_at: now };
  }
  if (move === 'end') {
    if (row.status !== 'running') throw problems.lifecycleMoveNotAllowed(`only a running holdout can end; this one is ${row.status}`);
    return { status: 'ended', ended_at: now };
  }
  if (row.status === 'archived') return null;
  return { status: 'archived', ...(row.status === 'running' ? { ended_at: now } : {}) };
}

const PAST = { start: 'started', end: 'ended', archive: 'archived' } as const;

async function move(ctx: HoldoutsDeps, actor: Actor, id: string, kind: Move): Promise<Holdout> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await loadForChange(ctx, trx, actor, id);
    const now = ctx.clock.now();
    const changes = moveChanges(row, kind, now);
    if (!changes) return { holdout: toHoldout(row), moved: false };
    await updateHoldout(trx, row.id, { ...changes, updated_at: now });
    await audit(trx, actor, `holdout.${PAST[kind]}`, 'holdout', row.id, { from: row.status, name: row.name, percent: Number(row.percent) }, now);
    return { holdout: toHoldout({ ...row, ...changes, updated_at: now }), moved: true };
  });
  if (result.moved) publish(ctx, actor.workspaceId);
  return result.holdout;
}

export const startHoldout = (ctx: HoldoutsDeps, actor: Actor, id: string) => move(ctx, actor, id, 'start');
export const endHoldout = (ctx: HoldoutsDeps, actor: Actor, id: string) => move(ctx, actor, id, 'end');
export const archiveHoldout = (ctx: HoldoutsDeps, actor: Actor, id: string) => move(ctx, actor, id, 'archive');

export async function getHoldout(ctx: HoldoutsDeps, workspaceId: string, id: string): Promise<Holdout> {
  const row = await findHoldout(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no holdout with id ${id}`);
  return toHoldout(row);
}

/** The experiments a holdout covers (with their launches) and those it would cover but that opted out. */
export async function holdoutExperiments(ctx: HoldoutsDeps, workspaceId: string, id: string) {
  const holdout = await findHoldout(ctx.db, workspaceId, id);
  if (!holdout) throw problems.notFound(`no holdout with id ${id}`);
  const rows = (await experimentsIn(ctx.db, workspaceId, holdout.environment_id, holdout.unit_type)).filter((row) => covers(holdout, row));
  return {
    covered: rows
      .filter((row) => row.opt_out_reason === null)
      .map((row) => ({
        id: row.id,
        key: row.key,
        name: row.name,
        status: row.status,
        started_at: toIsoOrNull(row.started_at),
        stopped_at: toIsoOrNull(row.stopped_at),
        launched_variant_key: row.launched_variant_key,
        launched_at: toIsoOrNull(row.launched_at),
      })),
    opted_out: rows
      .filter((row) => row.opt_out_reason !== null)
      .map((row) => ({ id: row.id, key: row.key, name: row.name, reason: row.opt_out_reason as string, opted_out_at: toIso(row.opted_out_at as number) })),
  };
}

async function experimentFor(executor: Executor, workspaceId: string, experimentId: string) {
  const experiment = await findExperiment(executor, workspaceId, experimentId);
  if (!experiment) throw problems.notFound(`no experiment with id ${experimentId}`);
  return experiment;
}

/** The running holdouts covering an experiment, and its opt-out. */
export async function experimentHoldouts(ctx: HoldoutsDeps, workspaceId: string, experimentId: string) {
  const experiment = await experimentFor(ctx.db, workspaceId, experimentId);
  const optOut = await findOptOut(ctx.db, experiment.id);
  const rows = await runningHoldoutsCovering(ctx.db, experiment);
  return {
    holdouts: rows.map((row) => ({ id: row.id, name: row.name, percent: Number(row.percent), status: row.status })),
    opt_out: optOut ? { reason: optOut.reason, created_at: toIso(optOut.created_at) } : null,
  };
}

/** Opts an experiment out of every holdout: from its next assignment no unit is held out in it. */
export async function optOut(ctx: HoldoutsDeps, actor: Actor, experimentId: string, input: OptOutInput) {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const experiment = await experimentFor(trx, actor.workspaceId, experimentId);
    if (experiment.status === 'archived') throw problems.experimentNotEditable('an archived experiment cannot opt out of holdouts');
    const now = ctx.clock.now();
    await upsertOptOut(trx, { experiment_id: experiment.id, workspace_id: actor.workspaceId, reason: input.reason, created_at: now });
    await audit(trx, actor, 'experiment.holdout_opted_out', 'experiment', experiment.id, { experiment_key: experiment.key, reason: input.reason }, now);
    return { reason: input.reason, created_at: toIso(now) };
  });
  publish(ctx, actor.workspaceId);
  return result;
}

export async function removeOptOut(ctx: HoldoutsDeps, actor: Actor, experimentId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const experiment = await experimentFor(trx, actor.workspaceId, experimentId);
    if (!(await deleteOptOut(trx, experiment.id))) throw problems.notFound(`experiment "${experiment.key}" has not opted out of holdouts`);
    await audit(trx, actor, 'experiment.holdout_opt_out_removed', 'experiment', experiment.id, { experiment_key: experiment.key }, ctx.clock.now());
  });
  publish(ctx, actor.workspaceId);
}

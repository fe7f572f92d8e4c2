import type { Tx } from '../../db/database.js';
import { uniqueViolationAs } from '../../db/dialect.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { ExperimentsDeps } from './deps.js';
import { allocationErrors, normalizeAllocation, parseAllocation, startingWeightErrors, type StoredPeriod } from './allocation.js';
import { goalColumns, normalizeMultipleTesting, secondaryOverlapErrors } from './multiple-testing.js';
import { referenceErrors } from './references.js';
import { LABEL_FIELDS, normalizeTags, ownerText, resolveOwner, serializeTags, tagErrors, type OwnerColumns } from './labels.js';
import {
  assertPatchAllowed,
  audienceErrors,
  autoStopErrors,
  normalizeAutoStop,
  changedFields,
  dimensionErrors,
  normalizeVariants,
  normalizeVarianceReduction,
  variantErrors,
  withDefaults,
} from './rules.js';
import type { Experiment, ExperimentInput, ExperimentPatch, StopExperimentInput } from './schemas.js';
import type { AutoStopRequest, StoppedBy } from './lifecycle.js';
import { findExperiment, lockExperiment, toExperiment, type ExperimentRow } from './read.js';
import { insertExperiment, updateExperiment } from './store.js';
import { launchInTransaction, NOT_LAUNCHED } from './launch.js';

interface Actor {
  workspaceId: string;
  actorId: string;
  /** How the actor reached the API: a session is a person in the admin UI, a bearer a key. */
  via?: 'bearer' | 'session';
  /** The person acting through an admin UI session: the owner of what they create without naming one. */
  userId?: string | undefined;
}

function duplicateKey(key: string | undefined) {
  return () => problems.keyTaken(`an experiment with key "${key}" already exists in this workspace`);
}

async function audit(trx: Tx, actor: Actor, action: string, experimentId: string, payload: Record<string, unknown>, at: number) {
  await recordAudit(trx, { ...actor, action, targetType: 'experiment', targetId: experimentId, payload, at });
}

/** The row of a new draft: the input with its defaults, nothing started, stopped or launched. */
function draftRow(actor: Actor, input: ExperimentInput, allocation: ReturnType<typeof normalizeAllocation>, owner: OwnerColumns, now: number): ExperimentRow {
  return {
    id: newId(),
    workspace_id: actor.workspaceId,
    environment_id: input.environment_id,
    key: input.key,
    name: input.name,
    hypothesis: input.hypothesis,
    unit_type: input.unit_type,
    status: 'draft',
    variants: JSON.stringify(normalizeVariants(input.variants)),
    audience: input.audience ? JSON.stringify(input.audience) : null,
    decision_rule: JSON.stringify(withDefaults(input.decision_rule)),
    primary_metric_id: input.primary_metric_id ?? null,
    guardrail_metric_ids: JSON.stringify(input.guardrail_metric_ids ?? []),
    ...goalColumns(input),
    mutex_group_id: input.mutex_group_id ?? null,
    variance_reduction: serializeVarianceReduction(input.variance_reduction),
    dimensions: JSON.stringify(input.dimensions ?? []),
    allocation: allocation.type === 'fixed' ? null : JSON.stringify(allocation),
    allocation_periods: null,
    auto_stop: JSON.stringify(normalizeAutoStop(input.auto_stop)),
    weights_changed: 0,
    started_at: null,
    stopped_at: null,
    stop_reason: null,
    outcome_notes: null,
    stopped_by: null,
    stop_snapshot_id: null,
    ...NOT_LAUNCHED,
    tags: serializeTags(input.tags),
    ...owner,
    assignment_source_id: input.assignment_source_id ?? null,
    assignment_experiment_key: input.assignment_source_id ? (input.assignment_experiment_key ?? null) : null,
    created_at: now,
    updated_at: now,
  };
}

/** What is wrong with a new experiment's own fields, before any reference is looked up. */
function creationShapeErrors(input: ExperimentInput, allocation: ReturnType<typeof normalizeAllocation>) {
  return [
    ...variantErrors(input.variants),
    ...audienceErrors(input.audience),
    ...dimensionErrors(input.dimensions),
    ...allocationErrors(allocation, input.variants.length, input.primary_metric_id),
    ...startingWeightErrors(allocation, input.variants),
    ...autoStopErrors(normalizeAutoStop(input.auto_stop), withDefaults(input.decision_rule).method, '/auto_stop/on_recommendation'),
    ...secondaryOverlapErrors(input.primary_metric_id ?? null, input.guardrail_metric_ids ?? [], input.secondary_metric_ids ?? []),
    ...tagErrors(input.tags),
    ...assignedElsewhereErrors(input),
  ];
}

/** An analysis-only experiment (assigned elsewhere) names its source to take a source key, and no bandit can steer another system's split. */
function assignedElsewhereErrors(input: Pick<ExperimentInput, 'assignment_source_id' | 'assignment_experiment_key' | 'allocation'>) {
  const errors = [];
  if (!input.assignment_source_id && input.assignment_experiment_key)
    errors.push({ pointer: '/assignment_experiment_key', message: 'is the experiment’s key in its assignment source: set assignment_source_id too' });
  if (input.assignment_source_id && input.allocation && input.allocation.type !== 'fixed')
    errors.push({ pointer: '/allocation', message: 'an experiment assigned elsewhere cannot be a bandit: Verdict does not set its weights' });
  return errors;
}

/**
 * Creates a draft. `origin` (a duplicate's source, by id, key and name) is kept in the audit
 * entry beside the experiment.
 */
export async function createExperiment(ctx: ExperimentsDeps, actor: Actor, input: ExperimentInput, origin: Record<string, unknown> = {}): Promise<Experiment> {
  const allocation = normalizeAllocation(input.allocation);
  const shapeErrors = creationShapeErrors(input, allocation);
  if (shapeErrors.length > 0) throw problems.validation(shapeErrors);
  const experiment = await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const owner = await resolveOwner(trx, actor.workspaceId, input.owner !== undefined ? input.owner : (actor.userId ?? null));
        const refErrors = await referenceErrors(trx, actor.workspaceId, input);
        if (refErrors.length > 0) throw problems.validation(refErrors);
        const now = ctx.clock.now();
        const row = draftRow(actor, input, allocation, owner, now);
        await insertExperiment(trx, row);
        const created = toExperiment(row);
        await audit(trx, actor, 'experiment.created', row.id, { experiment: created, ...origin }, now);
        return created;
      }),
    duplicateKey(input.key),
  );
  publish(ctx, experiment, []);
  return experiment;
}

function publish(ctx: ExperimentsDeps, experiment: Experiment, oldKeys: string[]) {
  ctx.changes.publish({ topic: 'experiment', workspaceId: experiment.workspace_id, id: experiment.id, keys: [experiment.key, ...oldKeys] });
}

async function loadForChange(ctx: ExperimentsDeps, trx: Tx, actor: Actor, id: string): Promise<ExperimentRow> {
  const row = await lockExperiment(trx, ctx.seam, actor.workspaceId, id);
  if (!row) throw problems.notFound(`no experiment with id ${id}`);
  return row;
}

/** Applies a patch under a row lock: lifecycle rules first, then validation, then one audited update. */
export async function patchExperiment(ctx: ExperimentsDeps, actor: Actor, id: string, patch: ExperimentPatch): Promise<Experiment> {
  const shapeErrors = [
    ...(patch.variants ? variantErrors(patch.variants) : []),
    ...audienceErrors(patch.audience),
    ...dimensionErrors(patch.dimensions),
    ...tagErrors(patch.tags),
  ];
  if (shapeErrors.length > 0) throw problems.validation(shapeErrors);
  const { before, after } = await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const row = await loadForChange(ctx, trx, actor, id);
        const current = toExperiment(row);
        const changed = changedFields(comparable(patch, current), comparable(current, current));
        const variantKeysChanged =
          patch.variants !== undefined &&
          !sameKeys(
            patch.variants.map((v) => v.key),
            current.variants.map((v) => v.key),
          );
        // Tags and owner file an experiment away; they change in any status.
        const definition = changed.filter((field) => !LABEL_FIELDS.has(field));
        const onlyLabels = Object.keys(patch).every((field) => LABEL_FIELDS.has(field));
        if (definition.length > 0 || (changed.length === 0 && !onlyLabels)) assertPatchAllowed(row.status, definition, variantKeysChanged);
        if (changed.length === 0) return { before: current, after: current };
        assertAllocationPatch(current, patch, changed);
        const autoStop = [...autoStopAfterPatch(current, patch), ...secondaryErrorsAfterPatch(current, patch)];
        if (autoStop.length > 0) throw problems.validation(autoStop);
        const refErrors = await referenceErrors(trx, actor.workspaceId, pick(patch, changed));
        if (refErrors.length > 0) throw problems.validation(refErrors);
        const owner = changed.includes('owner') ? await resolveOwner(trx, actor.workspaceId, patch.owner ?? null) : null;
        const now = ctx.clock.now();
        const changes = { ...rowChanges(row, current, patch, changed, now), ...(owner ?? {}) };
        await updateExperiment(trx, row.id, changes);
        const updated = toExperiment({ ...row, ...changes });
        const diff = Object.fromEntries(
          changed.map((field) => [field, { from: (current as Record<string, unknown>)[field], to: (updated as Record<string, unknown>)[field] }]),
        );
        await audit(trx, actor, 'experiment.updated', row.id, { changes: diff }, now);
        return { before: current, after: updated };
      }),
    duplicateKey(patch.key),
  );
  publish(ctx, after, before.key === after.key ? [] : [before.key]);
  return after;
}

/** The auto-stop switches and the decision rule as the patch would leave them, checked together. */
function autoStopAfterPatch(current: Experiment, patch: ExperimentPatch) {
  const autoStop = patch.auto_stop === undefined ? current.auto_stop : normalizeAutoStop(patch.auto_stop);
  const method = withDefaults(patch.decision_rule, current.decision_rule).method;
  const pointer = patch.auto_stop?.on_recommendation ? '/auto_stop/on_recommendation' : '/decision_rule/method';
  return autoStopErrors(autoStop, method, pointer);
}

/** The goals as the patch would leave them: a secondary metric is neither the primary nor a guardrail. */
function secondaryErrorsAfterPatch(current: Experiment, patch: ExperimentPatch) {
  const primary = patch.primary_metric_id === undefined ? current.primary_metric_id : patch.primary_metric_id;
  return secondaryOverlapErrors(
    primary,
    patch.guardrail_metric_ids ?? current.guardrail_metric_ids,
    patch.secondary_metric_ids ?? current.secondary_metric_ids,
  );
}

/** Both sides in the stored form (defaults filled, controls explicit, no ids) so only real changes count. */
function comparable(source: ExperimentPatch | Experiment, current: Experiment): Record<string, unknown> {
  const result: Record<string, unknown> = { ...source };
  if (source.variants) {
    const normalized = normalizeVariants(source.variants as ExperimentPatch['variants'] & object, current.variants);
    result.variants = normalized.map(({ key, weight, description, is_control }) => ({ key, weight, description, is_control }));
  }
  if (source.decision_rule) result.decision_rule = withDefaults(source.decision_rule, current.decision_rule);
  if (source.variance_reduction !== undefined) result.variance_reduction = normalizeVarianceReduction(source.variance_reduction);
  if (source.allocation !== undefined) result.allocation = normalizeAllocation(source.allocation);
  if (source.auto_stop !== undefined) result.auto_stop = normalizeAutoStop(source.auto_stop);
  if (source.multiple_testing !== undefined) result.multiple_testing = normalizeMultipleTesting(source.multiple_testing);
  if (source.tags !== undefined) result.tags = normalizeTags(source.tags);
  if (source.owner !== undefined) result.owner = ownerText(source.owner);
  return result;
}

function serializeVarianceReduction(input: ExperimentPatch['variance_reduction']): string | null {
  const normalized = normalizeVarianceReduction(input);
  return normalized === null ? null : JSON.stringify(normalized);
}

/**
 * A bandit's rules on the experiment as the patch would leave it: it needs a primary metric, a
 * floor below 1/K and, while a draft, starting weights at or above the floor; while it runs, it
 * sets the weights itself (a hand-made change would start a split its analysis does not know of).
 */
function assertAllocationPatch(current: Experiment, patch: ExperimentPatch, changed: string[]): void {
  const allocation = changed.includes('allocation') ? normalizeAllocation(patch.allocation) : current.allocation;
  const variants = patch.variants ?? current.variants;
  const primary = changed.includes('primary_metric_id') ? patch.primary_metric_id : current.primary_metric_id;
  const errors = [...allocationErrors(allocation, variants.length, primary), ...(current.status === 'draft' ? startingWeightErrors(allocation, variants) : [])];
  if (errors.length > 0) throw problems.validation(errors);
  if (current.status === 'running' && allocation.type === 'bandit' && changed.includes('variants')) {
    throw problems.experimentNotEditable('a running bandit sets its variants’ weights itself; they cannot be changed by hand');
  }
}

function sameKeys(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join('\u0000') === [...b].sort().join('\u0000');
}

function pick(patch: ExperimentPatch, fields: string[]): ExperimentPatch {
  return Object.fromEntries(Object.entries(patch).filter(([field]) => fields.includes(field))) as ExperimentPatch;
}

function rowChanges(row: ExperimentRow, current: Experiment, patch: ExperimentPatch, changed: string[], now: number): Partial<ExperimentRow> {
  const changes: Partial<ExperimentRow> = { updated_at: now };
  const has = (field: string) => changed.includes(field);
  if (has('environment_id')) changes.environment_id = patch.environment_id as string;
  if (has('key')) changes.key = patch.key as string;
  if (has('name')) changes.name = patch.name as string;
  if (has('hypothesis')) changes.hypothesis = patch.hypothesis as string;
  if (has('unit_type')) changes.unit_type = patch.unit_type as string;
  if (has('audience')) changes.audience = patch.audience ? JSON.stringify(patch.audience) : null;
  if (has('decision_rule')) changes.decision_rule = JSON.stringify(withDefaults(patch.decision_rule, current.decision_rule));
  if (has('primary_metric_id')) changes.primary_metric_id = patch.primary_metric_id ?? null;
  if (has('guardrail_metric_ids')) changes.guardrail_metric_ids = JSON.stringify(patch.guardrail_metric_ids ?? []);
  if (has('secondary_metric_ids')) changes.secondary_metric_ids = JSON.stringify(patch.secondary_metric_ids ?? []);
  if (has('multiple_testing')) changes.multiple_testing = JSON.stringify(normalizeMultipleTesting(patch.multiple_testing));
  if (has('mutex_group_id')) changes.mutex_group_id = patch.mutex_group_id ?? null;
  if (has('variance_reduction')) changes.variance_reduction = serializeVarianceReduction(patch.variance_reduction);
  if (has('dimensions')) changes.dimensions = JSON.stringify(patch.dimensions ?? []);
  if (has('allocation')) {
    const allocation = normalizeAllocation(patch.allocation);
    changes.allocation = allocation.type === 'fixed' ? null : JSON.stringify(allocation);
  }
  if (has('auto_stop')) changes.auto_stop = JSON.stringify(normalizeAutoStop(patch.auto_stop));
  if (has('tags')) changes.tags = serializeTags(patch.tags);
  if (has('assignment_source_id')) changes.assignment_source_id = patch.assignment_source_id ?? null;
  if (has('assignment_source_id') && !patch.assignment_source_id) changes.assignment_experiment_key = null;
  if (has('assignment_experiment_key')) changes.assignment_experiment_key = patch.assignment_experiment_key ?? null;
  if (has('variants') && patch.variants) {
    // Keep the stored order (it is part of the bucketing rule) when only weights change.
    const ordered = row.status === 'running' ? current.variants.map((v) => patch.variants?.find((p) => p.key === v.key) ?? v) : patch.variants;
    const variants = normalizeVariants(ordered, current.variants);
    changes.variants = JSON.stringify(variants);
    const weightsMoved = variants.some((v) => current.variants.find((old) => old.key === v.key)?.weight !== v.weight);
    if (row.status === 'running' && weightsMoved) changes.weights_changed = 1;
  }
  return changes;
}

type Transition = 'start' | 'stop' | 'archive';

async function transition(ctx: ExperimentsDeps, actor: Actor, id: string, kind: Transition, stop?: StopExperimentInput): Promise<Experiment> {
  const result = await ctx.db.transaction().execute(async (trx) => {
    const row = await loadForChange(ctx, trx, actor, id);
    const now = ctx.clock.now();
    const stoppedBy: StoppedBy = actor.via === 'session' ? 'person' : 'key';
    const changes = transitionChanges(row, kind, now, stop);
    if (!changes) return toExperiment(row);
    // Archiving a running experiment stops it too: whoever archived it stopped it.
    if (changes.stopped_at !== undefined) Object.assign(changes, { stopped_by: stoppedBy, stop_snapshot_id: null });
    await updateExperiment(trx, row.id, changes);
    const updated = toExperiment({ ...row, ...changes });
    const payload = kind === 'stop' ? { from: row.status, reason: stop?.reason, outcome_notes: stop?.outcome_notes ?? null } : { from: row.status };
    await audit(
      trx,
      actor,
      `experiment.${kind === 'archive' ? 'archived' : kind === 'start' ? 'started' : 'stopped'}`,
      row.id,
      kind === 'stop' ? { ...payload, stopped_by: stoppedBy } : payload,
      now,
    );
    if (kind === 'start') await ctx.lifecycle?.(trx, { kind: 'started', experiment: updated, actorId: actor.actorId });
    if (kind === 'stop') await ctx.lifecycle?.(trx, { kind: 'stopped', experiment: updated, actorId: actor.actorId, stoppedBy, snapshotId: null });
    if (kind === 'stop' && stop?.launch_variant_key)
      return launchInTransaction(trx, actor, { ...row, ...changes }, { variant_key: stop.launch_variant_key }, now);
    return updated;
  });
  publish(ctx, result, []);
  return result;
}

/** The lifecycle: draft -> running -> stopped, and anything -> archived. Null means "already there". */
function transitionChanges(row: ExperimentRow, kind: Transition, now: number, stop?: StopExperimentInput): Partial<ExperimentRow> | null {
  if (kind === 'start') {
    if (row.status !== 'draft') throw problems.lifecycleMoveNotAllowed(`only a draft experiment can start; this one is ${row.status}`);
    return { status: 'running', started_at: now, updated_at: now, ...startingPeriod(row, now) };
  }
  if (kind === 'stop') {
    if (row.status !== 'running') throw problems.lifecycleMoveNotAllowed(`only a running experiment can stop; this one is ${row.status}`);
    return { status: 'stopped', stopped_at: now, stop_reason: stop?.reason ?? null, outcome_notes: stop?.outcome_notes ?? null, updated_at: now };
  }
  if (row.status === 'archived') return null;
  return { status: 'archived', updated_at: now, ...(row.status === 'running' ? { stopped_at: now } : {}) };
}

/** A bandit's first period: its starting weights, from the start. */
function startingPeriod(row: ExperimentRow, now: number): Partial<ExperimentRow> {
  if (parseAllocation(row.allocation).type !== 'bandit') return {};
  const weights = Object.fromEntries(toExperiment(row).variants.map((variant) => [variant.key, variant.weight]));
  const period: StoredPeriod = { started_at: now, weights, seed: null };
  return { allocation_periods: JSON.stringify([period]) };
}

export const startExperiment = (ctx: ExperimentsDeps, actor: Actor, id: string) => transition(ctx, actor, id, 'start');
export const stopExperiment = (ctx: ExperimentsDeps, actor: Actor, id: string, input: StopExperimentInput) => transition(ctx, actor, id, 'stop', input);
export const archiveExperiment = (ctx: ExperimentsDeps, actor: Actor, id: string) => transition(ctx, actor, id, 'archive');

export async function getExperiment(ctx: ExperimentsDeps, workspaceId: string, id: string): Promise<Experiment> {
  const row = await findExperiment(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no experiment with id ${id}`);
  return toExperiment(row);
}

/**
 * Stops a running experiment because a snapshot met one of its auto-stop conditions, in the
 * caller's transaction (the one storing that snapshot). Null when it is no longer running. The
 * change notice goes out through the returned function, after the caller commits.
 */
export async function stopAutomatically(
  ctx: ExperimentsDeps,
  trx: Tx,
  request: AutoStopRequest,
): Promise<{ experiment: Experiment; afterCommit: () => void } | null> {
  const row = await lockExperiment(trx, ctx.seam, request.workspaceId, request.experimentId);
  if (!row || row.status !== 'running') return null;
  const now = ctx.clock.now();
  const changes: Partial<ExperimentRow> = {
    status: 'stopped',
    stopped_at: now,
    stop_reason: request.reason,
    outcome_notes: request.notes,
    stopped_by: 'auto',
    stop_snapshot_id: request.snapshotId,
    updated_at: now,
  };
  await updateExperiment(trx, row.id, changes);
  const updated = toExperiment({ ...row, ...changes });
  const payload = {
    from: row.status,
    reason: request.reason,
    outcome_notes: request.notes,
    stopped_by: 'auto',
    snapshot_id: request.snapshotId,
    condition: request.condition,
  };
  await recordAudit(trx, {
    workspaceId: row.workspace_id,
    actorId: null,
    action: 'experiment.stopped',
    targetType: 'experiment',
    targetId: row.id,
    payload,
    at: now,
  });
  await ctx.lifecycle?.(trx, { kind: 'stopped', experiment: updated, actorId: null, stoppedBy: 'auto', snapshotId: request.snapshotId });
  return { experiment: updated, afterCommit: () => publish(ctx, updated, []) };
}

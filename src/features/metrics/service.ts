import { uniqueViolationAs } from '../../db/dialect.js';
import { Problem, problems, type FieldError } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { MetricsDeps } from './deps.js';
import { ratioComponentErrors, resolveMetricInput, type ResolvedMetric } from './rules.js';
import type { MetricInput, MetricPatch } from './schemas.js';
import type { MetricRow } from './read.js';
import { deleteMetric, findMetric, findMetricReferrers, insertMetric, toMetric, updateMetric, type MetricReferrer } from './store.js';

export { resolveMetricInput, type ResolvedMetric } from './rules.js';

function toRow(metric: ResolvedMetric): Omit<MetricRow, 'id' | 'workspace_id' | 'created_at' | 'updated_at'> {
  return { ...metric, higher_is_better: metric.higher_is_better ? 1 : 0, capping: metric.capping === null ? null : JSON.stringify(metric.capping) };
}

/** The audit payload: the definition as the API shows it (no milliseconds, no internal '' event key). */
function described(metric: ResolvedMetric): Record<string, unknown> {
  const { unit_dedup_window_ms: _ms, event_key, quantile, quantile_level, ...rest } = metric;
  return { ...rest, event_key: metric.kind === 'ratio' ? null : event_key, ...(metric.kind === 'quantile' ? { quantile, quantile_level } : {}) };
}

export async function createMetric(ctx: MetricsDeps, workspaceId: string, actorId: string, input: MetricInput) {
  const resolved = resolveMetricInput(input);
  if ('errors' in resolved) throw problems.validation(resolved.errors);
  const componentErrors = await ratioComponentErrors(ctx.db, workspaceId, resolved.metric);
  if (componentErrors.length > 0) throw problems.validation(componentErrors);
  const now = ctx.clock.now();
  const row: MetricRow = { id: newId(), workspace_id: workspaceId, ...toRow(resolved.metric), created_at: now, updated_at: now };
  await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        await insertMetric(trx, row);
        await recordAudit(trx, {
          workspaceId,
          actorId,
          action: 'metric.created',
          targetType: 'metric',
          targetId: row.id,
          payload: described(resolved.metric),
          at: now,
        });
      }),
    () => problems.keyTaken(`a metric with key "${input.key}" already exists in this workspace`),
  );
  return toMetric(row);
}

export async function getMetric(ctx: MetricsDeps, workspaceId: string, id: string) {
  const row = await findMetric(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no metric with id ${id}`);
  return toMetric(row);
}

/** The current definition with the patch applied, in the create input's shape, so the same rules judge it. */
function patchedInput(current: MetricRow, patch: MetricPatch): MetricInput {
  const shown = toMetric(current);
  return {
    key: current.key,
    name: patch.name ?? current.name,
    description: patch.description === undefined ? shown.description : patch.description,
    ...(current.kind === 'ratio'
      ? { numerator_metric_id: current.numerator_metric_id ?? '', denominator_metric_id: current.denominator_metric_id ?? '' }
      : { event_key: current.event_key }),
    kind: current.kind,
    aggregation: current.aggregation,
    higher_is_better: patch.higher_is_better ?? shown.higher_is_better,
    capping: patch.capping === undefined ? shown.capping : patch.capping,
    unit_dedup_window: patch.unit_dedup_window ?? current.unit_dedup_window,
    property_path: patch.property_path === undefined ? current.property_path : patch.property_path,
    unit: patch.unit === undefined ? current.unit : patch.unit,
    ...(current.kind === 'quantile' ? { quantile: current.quantile ?? 0.5, quantile_level: current.quantile_level ?? 'event' } : {}),
  };
}

function fixedFieldErrors(current: MetricRow, patch: MetricPatch): FieldError[] {
  const errors: FieldError[] = [];
  if (patch.key !== undefined && patch.key !== current.key) {
    errors.push({ pointer: '/key', message: 'a metric’s key cannot change: experiments, snapshots and dashboards name it; create a new metric instead' });
  }
  if (patch.kind !== undefined && patch.kind !== current.kind) {
    errors.push({ pointer: '/kind', message: 'a metric’s kind cannot change: past snapshots were computed with it; create a new metric instead' });
  }
  return errors;
}

type FieldChange = { from: unknown; to: unknown };

function changesOf(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const field of ['name', 'description', 'higher_is_better', 'capping', 'property_path', 'unit_dedup_window', 'unit']) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = { from: before[field], to: after[field] };
  }
  return changes;
}

/**
 * PATCH /v1/metrics/{id}: name, description, direction, capping, property_path and window; not
 * key or kind. Later snapshots use the new definition. An unchanged body logs nothing.
 */
export async function patchMetric(ctx: MetricsDeps, workspaceId: string, actorId: string, id: string, patch: MetricPatch) {
  return ctx.db.transaction().execute(async (trx) => {
    const current = await findMetric(trx, workspaceId, id);
    if (!current) throw problems.notFound(`no metric with id ${id}`);
    const fixed = fixedFieldErrors(current, patch);
    if (fixed.length > 0) throw problems.validation(fixed);
    const resolved = resolveMetricInput(patchedInput(current, patch));
    if ('errors' in resolved) throw problems.validation(resolved.errors);
    const changes = changesOf(toMetric(current), described(resolved.metric));
    if (Object.keys(changes).length === 0) return toMetric(current);
    const now = ctx.clock.now();
    const {
      key: _key,
      kind: _kind,
      event_key: _event,
      numerator_metric_id: _n,
      denominator_metric_id: _d,
      aggregation: _a,
      ...editable
    } = toRow(resolved.metric);
    await updateMetric(trx, workspaceId, id, { ...editable, updated_at: now });
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'metric.updated',
      targetType: 'metric',
      targetId: id,
      payload: { key: current.key, changes },
      at: now,
    });
    return toMetric({ ...current, ...editable, updated_at: now });
  });
}

function stillUsed(key: string, referrers: MetricReferrer[]): Problem {
  const shown = referrers.slice(0, 10).map((referrer) => `${referrer.type} "${referrer.key}"`);
  const more = referrers.length > shown.length ? ` and ${referrers.length - shown.length} more` : '';
  const base = problems.metricInUse(`metric "${key}" is used by ${shown.join(', ')}${more}; remove it from those first`);
  return new Problem(409, base.detail, { type: base.type, title: base.title, extensions: { referrers } });
}

/** DELETE /v1/metrics/{id}: refused (409) while a draft or running experiment or a ratio metric uses it. */
export async function removeMetric(ctx: MetricsDeps, workspaceId: string, actorId: string, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = await findMetric(trx, workspaceId, id);
    if (!current) throw problems.notFound(`no metric with id ${id}`);
    const referrers = await findMetricReferrers(trx, workspaceId, id);
    if (referrers.length > 0) throw stillUsed(current.key, referrers);
    await deleteMetric(trx, workspaceId, id);
    const payload = { key: current.key, name: current.name, kind: current.kind };
    await recordAudit(trx, { workspaceId, actorId, action: 'metric.deleted', targetType: 'metric', targetId: id, payload, at: ctx.clock.now() });
  });
}

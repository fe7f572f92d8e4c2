import type { Executor } from '../../db/database.js';
import { uniqueViolationAs } from '../../db/dialect.js';
import { Problem, problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { validateAudience, type AudienceExpression } from '../assignment/audience.js';
import { recordAudit } from '../audit/recorder.js';
import type { SegmentsDeps } from './deps.js';
import { segmentReferenceErrors } from './references.js';
import type { SegmentInput, SegmentPatch } from './schemas.js';
import { deleteSegment, findSegment, findSegmentReferrers, insertSegment, segmentKeyTaken, toSegment, updateSegment, type SegmentReferrer } from './store.js';
import { loadSegmentRules, lockSegmentsOf, parseRule, type SegmentRow } from './read.js';

/** The rule as an audience tree, or a 422 whose pointers lead into the body (`/rule/...`). */
function checkedRule(rule: unknown): AudienceExpression | null {
  const issues = validateAudience(rule);
  if (issues.length > 0) throw problems.validation(issues.map((issue) => ({ pointer: `/rule${issue.pointer}`, message: issue.message })));
  return rule as AudienceExpression | null;
}

async function assertReferencesValid(executor: Executor, workspaceId: string, key: string, rule: AudienceExpression | null): Promise<void> {
  const errors = segmentReferenceErrors(key, rule, await loadSegmentRules(executor, workspaceId));
  if (errors.length > 0) throw problems.validation(errors);
}

function keyTaken(key: string): Problem {
  return problems.keyTaken(`a segment with key "${key}" already exists in this workspace`);
}

/** 409 that names every referrer, in the detail for people and in `referrers` for programs. */
function stillReferenced(key: string, referrers: SegmentReferrer[]): Problem {
  const shown = referrers.slice(0, 10).map((referrer) => `${referrer.type} "${referrer.key}"`);
  const more = referrers.length > shown.length ? ` and ${referrers.length - shown.length} more` : '';
  const base = problems.segmentInUse(`segment "${key}" is still referred to by ${shown.join(', ')}${more}; remove those references first`);
  return new Problem(409, base.detail, { type: base.type, title: base.title, extensions: { referrers } });
}

export async function createSegment(ctx: SegmentsDeps, workspaceId: string, actorId: string, input: SegmentInput) {
  const rule = checkedRule(input.rule);
  const segment = await uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        await lockSegmentsOf(trx, workspaceId);
        // Before the reference checks: against a taken key they would judge the wrong segment.
        if (await segmentKeyTaken(trx, workspaceId, input.key)) throw keyTaken(input.key);
        await assertReferencesValid(trx, workspaceId, input.key, rule);
        const now = ctx.clock.now();
        const row: SegmentRow = {
          id: newId(),
          workspace_id: workspaceId,
          key: input.key,
          name: input.name,
          description: input.description ?? null,
          rule: JSON.stringify(rule),
          created_at: now,
          updated_at: now,
        };
        await insertSegment(trx, row);
        const payload = { key: row.key, name: row.name, description: row.description, rule };
        await recordAudit(trx, { workspaceId, actorId, action: 'segment.created', targetType: 'segment', targetId: row.id, payload, at: now });
        return toSegment(row);
      }),
    () => keyTaken(input.key),
  );
  ctx.changes.publish({ topic: 'segment', workspaceId });
  return segment;
}

export async function getSegment(ctx: SegmentsDeps, workspaceId: string, id: string) {
  const row = await findSegment(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no segment with id ${id}`);
  return toSegment(row);
}

type FieldChange = { from: unknown; to: unknown };

/** Only the fields whose value actually differs, as {from, to} for the audit payload. */
function changesOf(current: SegmentRow, patch: SegmentPatch, rule: AudienceExpression | null | undefined): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  if (patch.name !== undefined && patch.name !== current.name) changes.name = { from: current.name, to: patch.name };
  if (patch.description !== undefined && patch.description !== current.description) {
    changes.description = { from: current.description, to: patch.description };
  }
  if (rule !== undefined && JSON.stringify(rule) !== current.rule) changes.rule = { from: parseRule(current.rule), to: rule };
  return changes;
}

/** Edits name, description and rule; the key is fixed because audiences refer to it. */
export async function patchSegment(ctx: SegmentsDeps, workspaceId: string, actorId: string, id: string, patch: SegmentPatch) {
  const rule = patch.rule === undefined ? undefined : checkedRule(patch.rule);
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    await lockSegmentsOf(trx, workspaceId);
    const current = await findSegment(trx, workspaceId, id);
    if (!current) throw problems.notFound(`no segment with id ${id}`);
    if (patch.key !== undefined && patch.key !== current.key) {
      throw problems.validation([{ pointer: '/key', message: 'a segment’s key cannot change: audiences refer to it by key; create a new segment instead' }]);
    }
    const changes = changesOf(current, patch, rule);
    if (Object.keys(changes).length === 0) return { segment: toSegment(current), changed: false };
    if (changes.rule && rule !== undefined) await assertReferencesValid(trx, workspaceId, current.key, rule);
    const now = ctx.clock.now();
    const updated: SegmentRow = { ...current, updated_at: now };
    if (changes.name) updated.name = patch.name ?? current.name;
    if (changes.description) updated.description = patch.description ?? null;
    if (changes.rule) updated.rule = JSON.stringify(rule);
    await updateSegment(trx, workspaceId, id, { name: updated.name, description: updated.description, rule: updated.rule, updated_at: now });
    const payload = { key: current.key, changes };
    await recordAudit(trx, { workspaceId, actorId, action: 'segment.updated', targetType: 'segment', targetId: id, payload, at: now });
    return { segment: toSegment(updated), changed: true };
  });
  if (outcome.changed) ctx.changes.publish({ topic: 'segment', workspaceId });
  return outcome.segment;
}

/** Refused (409) while another segment or a non-archived experiment still refers to the segment. */
export async function removeSegment(ctx: SegmentsDeps, workspaceId: string, actorId: string, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await lockSegmentsOf(trx, workspaceId);
    const current = await findSegment(trx, workspaceId, id);
    if (!current) throw problems.notFound(`no segment with id ${id}`);
    const referrers = await findSegmentReferrers(trx, workspaceId, current.key);
    if (referrers.length > 0) throw stillReferenced(current.key, referrers);
    await deleteSegment(trx, workspaceId, id);
    const payload = { key: current.key, name: current.name };
    await recordAudit(trx, { workspaceId, actorId, action: 'segment.deleted', targetType: 'segment', targetId: id, payload, at: ctx.clock.now() });
  });
  ctx.changes.publish({ topic: 'segment', workspaceId });
}

import { uniqueViolationAs } from '../../db/dialect.js';
import { problems, type Problem } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { LeadsDeps } from './deps.js';
import { DEFAULT_LEAD_STATUS, type LeadInput, type LeadPatch } from './schemas.js';
import { findLead, insertLead, lockLead, toLead, updateLead, type LeadRow } from './store.js';

function taskTaken(taskId: string | null | undefined): Problem {
  return problems.taskAlreadyLinked(`another lead of this workspace is already linked to task "${taskId ?? ''}"`);
}

function notFound(id: string): Problem {
  return problems.notFound(`no lead with id ${id}`);
}

export async function createLead(ctx: LeadsDeps, workspaceId: string, actorId: string, input: LeadInput) {
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const now = ctx.clock.now();
        const row: LeadRow = {
          id: newId(),
          workspace_id: workspaceId,
          name: input.name,
          email: input.email ?? null,
          status: input.status ?? DEFAULT_LEAD_STATUS,
          task_tool_task_id: input.task_tool_task_id ?? null,
          task_tool_status_at: null,
          created_at: now,
          updated_at: now,
        };
        await insertLead(trx, row);
        const payload = { name: row.name, email: row.email, status: row.status, task_tool_task_id: row.task_tool_task_id };
        await recordAudit(trx, { workspaceId, actorId, action: 'lead.created', targetType: 'lead', targetId: row.id, payload, at: now });
        return toLead(row);
      }),
    () => taskTaken(input.task_tool_task_id),
  );
}

export async function getLead(ctx: LeadsDeps, workspaceId: string, id: string) {
  const row = await findLead(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  return toLead(row);
}

type FieldChange = { from: unknown; to: unknown };
const PATCHABLE = ['name', 'email', 'status', 'task_tool_task_id'] as const;

function changesOf(current: LeadRow, patch: LeadPatch): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  for (const field of PATCHABLE) {
    const next = patch[field];
    if (next !== undefined && next !== current[field]) changes[field] = { from: current[field], to: next };
  }
  return changes;
}

/** Edits a lead; an unchanged body changes nothing and logs nothing. Re-linking a task resets its ordering mark. */
export async function patchLead(ctx: LeadsDeps, workspaceId: string, actorId: string, id: string, patch: LeadPatch) {
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        const current = await lockLead(trx, ctx.seam, workspaceId, id);
        if (!current) throw notFound(id);
        const changes = changesOf(current, patch);
        if (Object.keys(changes).length === 0) return toLead(current);
        const now = ctx.clock.now();
        const updated: LeadRow = {
          ...current,
          name: patch.name ?? current.name,
          email: patch.email === undefined ? current.email : patch.email,
          status: patch.status ?? current.status,
          task_tool_task_id: patch.task_tool_task_id === undefined ? current.task_tool_task_id : patch.task_tool_task_id,
          task_tool_status_at: changes.task_tool_task_id ? null : current.task_tool_status_at,
          updated_at: now,
        };
        const { id: _id, workspace_id: _workspace, created_at: _created, ...columns } = updated;
        await updateLead(trx, workspaceId, id, columns);
        await recordAudit(trx, { workspaceId, actorId, action: 'lead.updated', targetType: 'lead', targetId: id, payload: { changes }, at: now });
        return toLead(updated);
      }),
    () => taskTaken(patch.task_tool_task_id),
  );
}

// MirrorTaskStatusJob: applies a verified task-tool callback to the lead linked to the task.
// Everything one callback changes (applied history items, the lead, the audit entries) commits
// in one transaction, so a retry after a failure starts from a clean state, and a redelivered
// callback finds its history items already applied and changes nothing twice.
import type { Tx } from '../../db/database.js';
import type { JobContext } from '../../jobs/registry.js';
import { recordAudit } from '../audit/recorder.js';
import { lockLeadByTask, type LeadRow } from '../leads/read.js';
import { detachTask, mirrorTaskStatus } from '../leads/task-link.js';
import { MIRRORED_EVENTS, type MirrorTaskStatusPayload, type StatusChange } from './callback.js';
import type { TaskToolDeps } from './deps.js';
import { mapStatus } from './service.js';
import { claimHistoryItems, findSettings, parseMapping } from './store.js';

/** Audit action of a callback that changed nothing: unmapped status, unknown task. */
export const MIRRORED_EVENT_ACTION = 'mirroredevent';

function payloadOf(payload: unknown): MirrorTaskStatusPayload {
  const candidate = payload as Partial<MirrorTaskStatusPayload> | null;
  const valid =
    typeof candidate?.workspace_id === 'string' &&
    typeof candidate.task_id === 'string' &&
    (MIRRORED_EVENTS as readonly unknown[]).includes(candidate.event) &&
    Array.isArray(candidate.status_changes);
  if (!valid) throw new Error(`${MIRRORED_EVENT_ACTION}: the job payload is not a parsed task-tool callback`);
  return candidate as MirrorTaskStatusPayload;
}

/** The latest change by the tool's own clock; items without a date count in the order sent. */
function latestChange(changes: StatusChange[]): StatusChange | undefined {
  let latest: StatusChange | undefined;
  for (const change of changes) {
    if (!latest || (change.date ?? Number.NEGATIVE_INFINITY) >= (latest.date ?? Number.NEGATIVE_INFINITY)) latest = change;
  }
  return latest;
}

interface MirrorStep {
  trx: Tx;
  ctx: TaskToolDeps;
  callback: MirrorTaskStatusPayload;
  now: number;
}

async function auditUnchanged(step: MirrorStep, target: { type: string; id: string }, payload: Record<string, unknown>): Promise<void> {
  await recordAudit(step.trx, {
    workspaceId: step.callback.workspace_id,
    actorId: null,
    action: MIRRORED_EVENT_ACTION,
    targetType: target.type,
    targetId: target.id,
    payload: { event: step.callback.event, task_id: step.callback.task_id, webhook_id: step.callback.webhook_id, ...payload },
    at: step.now,
  });
}

/** The task is gone from the tool: the lead stays (it is ours) and is unlinked from the task. */
async function detachDeletedTask(step: MirrorStep, lead: LeadRow): Promise<void> {
  await detachTask(step.trx, lead, step.now);
  await recordAudit(step.trx, {
    workspaceId: lead.workspace_id,
    actorId: null,
    action: 'lead.task_deleted',
    targetType: 'lead',
    targetId: lead.id,
    payload: {
      task_id: step.callback.task_id,
      webhook_id: step.callback.webhook_id,
      changes: { task_tool_task_id: { from: step.callback.task_id, to: null } },
    },
    at: step.now,
  });
}

async function applyStatus(step: MirrorStep, lead: LeadRow, change: StatusChange): Promise<void> {
  const settings = await findSettings(step.trx, lead.workspace_id);
  const leadStatus = mapStatus(settings ? parseMapping(settings.status_mapping) : {}, change.after_status);
  const target = { type: 'lead', id: lead.id };
  if (leadStatus === undefined) {
    await auditUnchanged(step, target, { reason: 'unmapped_status', task_status: change.after_status, history_item_id: change.history_item_id });
    return;
  }
  if (change.date !== null && lead.task_tool_status_at !== null && change.date < lead.task_tool_status_at) {
    await auditUnchanged(step, target, { reason: 'out_of_order', task_status: change.after_status, history_item_id: change.history_item_id });
    return;
  }
  await mirrorTaskStatus(step.trx, lead, leadStatus, change.date ?? step.now, step.now);
  if (leadStatus === lead.status) return;
  await recordAudit(step.trx, {
    workspaceId: lead.workspace_id,
    actorId: null,
    action: 'lead.status_mirrored',
    targetType: 'lead',
    targetId: lead.id,
    payload: {
      changes: { status: { from: lead.status, to: leadStatus } },
      task_status: change.after_status,
      task_id: step.callback.task_id,
      history_item_id: change.history_item_id,
      event: step.callback.event,
    },
    at: step.now,
  });
}

async function mirror(step: MirrorStep): Promise<void> {
  const { callback } = step;
  const lead = await lockLeadByTask(step.trx, step.ctx.seam, callback.workspace_id, callback.task_id);
  if (!lead) {
    // Recorded and finished: retrying cannot make a lead appear.
    await auditUnchanged(step, { type: 'task', id: callback.task_id }, { reason: 'no_lead_for_task' });
    return;
  }
  if (callback.event === 'taskDeleted') return detachDeletedTask(step, lead);
  const ids = [...new Set(callback.status_changes.map((change) => change.history_item_id))];
  const fresh = await claimHistoryItems(step.trx, callback.workspace_id, callback.task_id, ids, step.now);
  const change = latestChange(callback.status_changes.filter((candidate) => fresh.has(candidate.history_item_id)));
  if (change) await applyStatus(step, lead, change);
}

export async function runMirrorTaskStatusJob(ctx: TaskToolDeps, payload: unknown, { logger }: JobContext): Promise<void> {
  const callback = payloadOf(payload);
  await ctx.db.transaction().execute((trx) => mirror({ trx, ctx, callback, now: ctx.clock.now() }));
  logger.debug({ task_id: callback.task_id, event: callback.event }, 'task-tool callback mirrored');
}

import type { Executor } from '../../db/database.js';
import type { LeadRow } from './store.js';
import { updateLead } from './store.js';

// The only changes the task-tool slice makes to a lead (its mirror job, in the job's
// transaction): the lead keeps everything else it owns.

/** The task is gone from the tool: the lead stays and is unlinked from the task. */
export async function detachTask(executor: Executor, lead: LeadRow, now: number): Promise<void> {
  await updateLead(executor, lead.workspace_id, lead.id, { task_tool_task_id: null, task_tool_status_at: null, updated_at: now });
}

/** The task's status, mapped to a lead status, with the tool's time of it as the ordering mark. */
export async function mirrorTaskStatus(executor: Executor, lead: LeadRow, status: string, statusAt: number, now: number): Promise<void> {
  await updateLead(executor, lead.workspace_id, lead.id, { status, task_tool_status_at: statusAt, updated_at: now });
}

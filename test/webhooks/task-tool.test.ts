import { afterAll, beforeAll, expect, it } from 'vitest';
import { MIRROR_TASK_STATUS_JOB } from '../../src/features/task-tool/callback.js';
import { newId } from '../../src/lib/ids.js';
import type { Worker } from '../../src/jobs/worker.js';
import { auditOf, describeWebhooks, HOUR_MS, jobsSettled, postTaskTool, startWorker, type WebhookEnv } from './support.js';

let sequence = 0;
function itemId(): string {
  sequence += 1;
  return `hist-${process.pid}-${sequence}`;
}

/** A ClickUp-shaped status change, as the tool sends it. */
function statusItem(id: string, before: string | null, after: string, date: number) {
  return {
    id,
    type: 1,
    date: String(date),
    field: 'status',
    parent_id: '162641285',
    data: { status_type: 'custom' },
    source: null,
    user: { id: 183, username: 'John', email: 'john@company.com' },
    before: { status: before, color: '#d3d3d3', orderindex: 0, type: before === null ? 'removed' : 'open' },
    after: { status: after, color: '#3082B7', orderindex: 1, type: 'custom' },
  };
}

function statusCallback(taskId: string, items: unknown[], event = 'taskStatusUpdated') {
  return { event, task_id: taskId, webhook_id: '7fa3ec74-69a8-4530-a251-8a13730bd204', history_items: items };
}

/** The mapping the settings test saves; every test that mirrors a status saves it in its own workspace first. */
const statusMapping = { 'In Progress': 'working', complete: 'won', 'to do': 'new' };

// Every test gets a workspace of its own: no test reads the leads, mapping, secret or audit entries of another.
describeWebhooks('task-tool callbacks, leads and the mirror job', { workspace: 'test' }, (env: () => WebhookEnv) => {
  let worker: Worker;
  beforeAll(() => {
    worker = startWorker(env().server);
  });
  afterAll(async () => {
    await worker.stop(1_000);
  });

  const api = (method: string, path: string, body?: unknown) => env().server.request(method, path, { key: env().key, body });
  const callback = (body: unknown) => postTaskTool(env().server, env().workspaceId, env().webhookSecret, body);
  const saveMapping = async () => expect((await api('PUT', '/v1/task-tool/settings', { status_mapping: statusMapping })).status).toBe(200);
  const mirrorJobIds = async () =>
    (await env().server.ctx.db.selectFrom('jobs').select('id').where('name', '=', MIRROR_TASK_STATUS_JOB).orderBy('id').execute()).map((job) => job.id);
  const createLead = async (taskId: string | null, status = 'new') => {
    const created = await api('POST', '/v1/leads', { name: 'Ada Lovelace', email: 'ada@example.com', status, task_tool_task_id: taskId });
    expect(created.status).toBe(201);
    return created.body as { id: string; status: string };
  };
  const leadStatus = async (id: string) => (await api('GET', `/v1/leads/${id}`)).body.status as string;
  const mirrored = async (body: unknown) => {
    const response = await callback(body);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true });
    const jobs = await jobsSettled(env().server, MIRROR_TASK_STATUS_JOB);
    expect(jobs.every((job) => job.status === 'succeeded')).toBe(true);
  };

  it('creates, reads, lists and edits leads, with 409 for a task already linked', async () => {
    const lead = await createLead('task-crud');
    expect(lead).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com', status: 'new', task_tool_task_id: 'task-crud' });
    expect(await api('POST', '/v1/leads', { name: 'Twin', task_tool_task_id: 'task-crud' })).toMatchObject({
      status: 409,
      body: { type: 'https://verdict.dev/problems/task-already-linked' },
    });
    const defaulted = await api('POST', '/v1/leads', { name: 'No status' });
    expect(defaulted.body).toMatchObject({ status: 'new', email: null, task_tool_task_id: null });
    expect((await api('POST', '/v1/leads', { name: 'Bad', email: 'not-an-email' })).status).toBe(422);
    const patched = await api('PATCH', `/v1/leads/${defaulted.body.id}`, { status: 'contacted', email: 'x@example.com' });
    expect(patched.body).toMatchObject({ status: 'contacted', email: 'x@example.com' });
    expect((await api('PATCH', `/v1/leads/${defaulted.body.id}`, { task_tool_task_id: 'task-crud' })).status).toBe(409);
    const filtered = await api('GET', '/v1/leads?task_tool_task_id=task-crud');
    expect(filtered.body.data.map((row: any) => row.id)).toEqual([lead.id]);
    expect((await api('GET', '/v1/leads?status=contacted')).body.data.map((row: any) => row.id)).toEqual([defaulted.body.id]);
    const audit = await auditOf(env().server, env().key, `target_id=${defaulted.body.id}`);
    expect(audit.map((entry) => entry.action)).toEqual(['lead.updated', 'lead.created']);
    expect(audit[0]!.payload.changes.status).toEqual({ from: 'new', to: 'contacted' });
  });

  it('keeps leads and settings per workspace', async () => {
    const other = await env().server.bootstrap('Leads neighbour');
    const theirs = await env().server.request('POST', '/v1/leads', { key: other.key, body: { name: 'Theirs', task_tool_task_id: 'task-crud' } });
    expect(theirs.status).toBe(201);
    expect((await api('GET', `/v1/leads/${theirs.body.id}`)).status).toBe(404);
    expect((await api('PATCH', `/v1/leads/${theirs.body.id}`, { status: 'x' })).status).toBe(404);
    expect((await api('GET', '/v1/leads')).body.data.map((row: any) => row.id)).not.toContain(theirs.body.id);
    const client = (await api('POST', '/v1/api-keys', { name: 'sdk', kind: 'client' })).body.key;
    expect((await env().server.request('GET', '/v1/leads', { key: client })).status).toBe(403);
  });

  it('saves the status mapping, refuses names equal but for case, and audits it', async () => {
    expect((await api('GET', '/v1/task-tool/settings')).body).toEqual({ status_mapping: {}, previous_secret_expires_at: null, updated_at: null });
    const ambiguous = await api('PUT', '/v1/task-tool/settings', { status_mapping: { Done: 'won', DONE: 'lost' } });
    expect(ambiguous.status).toBe(422);
    expect(ambiguous.body.errors[0].pointer).toBe('/status_mapping/DONE');
    const mapping = statusMapping;
    const saved = await api('PUT', '/v1/task-tool/settings', { status_mapping: mapping });
    expect(saved.status).toBe(200);
    expect(saved.body.status_mapping).toEqual(mapping);
    expect((await api('GET', '/v1/task-tool/settings')).body.status_mapping).toEqual(mapping);
    const audit = await auditOf(env().server, env().key, 'action=task_tool.settings_updated');
    expect(audit[0]!.payload).toEqual({ from: {}, to: mapping });
  });

  it('answers 401, 404, 400 and 422 for callbacks it cannot take, and enqueues nothing', async () => {
    await saveMapping();
    const jobsBefore = await mirrorJobIds();
    const body = statusCallback('task-x', [statusItem(itemId(), 'to do', 'complete', Date.now())]);
    const raw = JSON.stringify(body);
    const cases: Array<[Promise<any>, number, RegExp?]> = [
      [postTaskTool(env().server, env().workspaceId, null, body), 401, /missing/],
      [postTaskTool(env().server, env().workspaceId, env().webhookSecret, body, 'zz'), 401, /malformed/],
      [postTaskTool(env().server, env().workspaceId, 'whsec_wrong', body), 401, /does not match/],
      [postTaskTool(env().server, newId(), env().webhookSecret, body), 404],
      [postTaskTool(env().server, 'not-a-workspace', env().webhookSecret, body), 404],
      [postTaskTool(env().server, env().workspaceId, env().webhookSecret, raw.slice(0, -1)), 400],
      [callback({ event: 'taskStatusUpdated', history_items: [] }), 422],
      [callback({ event: 'taskStatusUpdated', task_id: 't', history_items: [{ field: 'status' }] }), 422],
    ];
    for (const [response, status, detail] of cases) {
      const answer = await response;
      expect(answer.status).toBe(status);
      expect(answer.headers.get('content-type')).toMatch(/problem\+json/);
      if (detail) expect(answer.body.detail).toMatch(detail);
    }
    expect(await mirrorJobIds()).toEqual(jobsBefore);
  });

  it('acknowledges and ignores events it is not subscribed to', async () => {
    await saveMapping();
    const jobsBefore = await mirrorJobIds();
    const response = await callback({ event: 'taskCommentPosted', task_id: 'task-x', webhook_id: 'w' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true, ignored: true });
    expect(await mirrorJobIds()).toEqual(jobsBefore);
  });

  it('mirrors a mapped status onto the lead, case-insensitively, audited with no actor', async () => {
    await saveMapping();
    const lead = await createLead('task-mirror');
    const item = itemId();
    await mirrored(statusCallback('task-mirror', [statusItem(item, 'to do', 'IN PROGRESS', Date.now())]));
    expect(await leadStatus(lead.id)).toBe('working');
    const audit = await auditOf(env().server, env().key, `action=lead.status_mirrored&target_id=${lead.id}`);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_id).toBeNull();
    expect(audit[0]!.payload).toMatchObject({ changes: { status: { from: 'new', to: 'working' } }, task_status: 'IN PROGRESS', history_item_id: item });
  });

  it('leaves the lead alone on an unmapped status and writes a mirroredevent entry', async () => {
    await saveMapping();
    const lead = await createLead('task-unmapped', 'working');
    await mirrored(statusCallback('task-unmapped', [statusItem(itemId(), 'in progress', 'blocked', Date.now())]));
    expect(await leadStatus(lead.id)).toBe('working');
    const audit = await auditOf(env().server, env().key, `action=mirroredevent&target_id=${lead.id}`);
    expect(audit).toHaveLength(1);
    expect(audit[0]!.payload).toMatchObject({ reason: 'unmapped_status', task_status: 'blocked', task_id: 'task-unmapped' });
  });

  it('applies a history item once: a redelivered callback changes nothing twice', async () => {
    await saveMapping();
    const lead = await createLead('task-dedupe');
    const first = statusCallback('task-dedupe', [statusItem(itemId(), 'to do', 'in progress', Date.now())]);
    await mirrored(first);
    await api('PATCH', `/v1/leads/${lead.id}`, { status: 'qualified' });
    await mirrored(first);
    expect(await leadStatus(lead.id)).toBe('qualified');
    expect(await auditOf(env().server, env().key, `action=lead.status_mirrored&target_id=${lead.id}`)).toHaveLength(1);
  });

  it('takes the latest status item of a callback, and ignores one older than what was applied', async () => {
    await saveMapping();
    const lead = await createLead('task-order');
    const now = env().clock.now();
    const later = statusItem(itemId(), 'in progress', 'complete', now);
    const earlier = statusItem(itemId(), 'to do', 'in progress', now - 60_000);
    await mirrored(statusCallback('task-order', [later, earlier]));
    expect(await leadStatus(lead.id)).toBe('won');
    await mirrored(statusCallback('task-order', [statusItem(itemId(), 'to do', 'to do', now - 120_000)], 'taskUpdated'));
    expect(await leadStatus(lead.id)).toBe('won');
    const skipped = await auditOf(env().server, env().key, `action=mirroredevent&target_id=${lead.id}`);
    expect(skipped[0]!.payload.reason).toBe('out_of_order');
  });

  it('mirrors status items of taskUpdated and ignores its other fields', async () => {
    await saveMapping();
    const lead = await createLead('task-updated');
    const content = { id: itemId(), field: 'content', date: String(Date.now()), before: 'old text', after: 'new text' };
    await mirrored(statusCallback('task-updated', [content], 'taskUpdated'));
    expect(await leadStatus(lead.id)).toBe('new');
    await mirrored(statusCallback('task-updated', [content, statusItem(itemId(), 'to do', 'Complete', Date.now())], 'taskUpdated'));
    expect(await leadStatus(lead.id)).toBe('won');
  });

  it('records a callback for a task no lead is linked to, and finishes the job', async () => {
    await saveMapping();
    await mirrored(statusCallback('task-nobody', [statusItem(itemId(), 'to do', 'complete', Date.now())]));
    const audit = await auditOf(env().server, env().key, 'action=mirroredevent&target_id=task-nobody');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.payload).toMatchObject({ reason: 'no_lead_for_task', task_id: 'task-nobody' });
  });

  it('keeps the lead and unlinks it when its task is deleted', async () => {
    await saveMapping();
    const lead = await createLead('task-deleted', 'working');
    await mirrored({ event: 'taskDeleted', task_id: 'task-deleted', webhook_id: '7fa3ec74' });
    const read = await api('GET', `/v1/leads/${lead.id}`);
    expect(read.body).toMatchObject({ status: 'working', task_tool_task_id: null });
    const audit = await auditOf(env().server, env().key, `action=lead.task_deleted&target_id=${lead.id}`);
    expect(audit[0]!.payload.changes).toEqual({ task_tool_task_id: { from: 'task-deleted', to: null } });
  });

  it('does not let one workspace’s secret move another workspace’s leads', async () => {
    await saveMapping();
    const other = await env().server.bootstrap('Mirror neighbour');
    const theirs = await env().server.request('POST', '/v1/leads', { key: other.key, body: { name: 'Theirs', task_tool_task_id: 'task-shared' } });
    const forged = await postTaskTool(
      env().server,
      other.workspaceId,
      env().webhookSecret,
      statusCallback('task-shared', [statusItem(itemId(), null, 'complete', Date.now())]),
    );
    expect(forged.status).toBe(401);
    await mirrored(statusCallback('task-shared', [statusItem(itemId(), null, 'complete', Date.now())]));
    const read = await env().server.request('GET', `/v1/leads/${theirs.body.id}`, { key: other.key });
    expect(read.body.status).toBe('new');
  });

  it('rotates the workspace secret once shown; the old one verifies for 24 hours', async () => {
    const secret = env().webhookSecret;
    const rotated = await api('POST', '/v1/task-tool/settings/rotate-secret');
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhook_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
    const body = { event: 'taskCommentPosted', task_id: 't' };
    expect((await postTaskTool(env().server, env().workspaceId, secret, body)).status).toBe(200);
    expect((await postTaskTool(env().server, env().workspaceId, rotated.body.webhook_secret, body)).status).toBe(200);
    expect((await api('GET', '/v1/task-tool/settings')).body.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at);
    env().clock.advance(24 * HOUR_MS);
    expect((await postTaskTool(env().server, env().workspaceId, secret, body)).status).toBe(401);
    expect((await postTaskTool(env().server, env().workspaceId, rotated.body.webhook_secret, body)).status).toBe(200);
    const audit = await auditOf(env().server, env().key, 'action=workspace.webhook_secret_rotated');
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toMatch(/whsec_/);
  });
});

import { createHmac } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { call, startDeployment, type Deployment } from './processes.js';
import { eventually } from '../support/processes.js';

const redisUrl = process.env.VERDICT_TEST_REDIS_URL;

async function startRunning(url: string, key: string, environmentId: string, experimentKey: string, extra: Record<string, unknown> = {}) {
  const created = await call(url, key, 'POST', '/v1/experiments', {
    environment_id: environmentId,
    key: experimentKey,
    name: experimentKey,
    hypothesis: 'h',
    unit_type: 'user',
    variants: [
      { key: 'control', weight: 50 },
      { key: 'treatment', weight: 50 },
    ],
    ...extra,
  });
  expect(created.status).toBe(201);
  expect((await call(url, key, 'POST', `/v1/experiments/${created.body.id}/start`)).status).toBe(200);
  return created.body;
}

describeEach('scaled mode: two API processes and two workers on PostgreSQL and Redis', { dialects: ['postgres'], buffers: ['redis'] }, () => {
  let database: TestDatabase;
  let deployment: Deployment;
  let db: Kysely<Database>;
  let key: string;
  let a: string;
  let b: string;
  /** Running before the workers start, so both schedulers' first tick finds it due (not a minute later). */
  let scheduled: { id: string };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const url = database.config.kind === 'postgres' ? database.config.url : '';
    const base = { databaseUrl: url, redisUrl: redisUrl as string, dataDir: database.dataDir };
    deployment = await startDeployment(base, 2, async ({ api, bootstrap }) => {
      const decision_rule = { snapshot_cadence_minutes: 60 };
      scheduled = await startRunning(api[0]!.url, bootstrap.key, bootstrap.environmentId, 'scaled-analysis', { decision_rule });
    });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) });
    key = deployment.bootstrap.key;
    [a, b] = deployment.api.map((api) => api.url) as [string, string];
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
    await db?.destroy();
    await database?.drop();
  });

  const startExperiment = (experimentKey: string, extra: Record<string, unknown> = {}) =>
    startRunning(a, key, deployment.bootstrap.environmentId, experimentKey, extra);

  it('agrees on concurrent first assigns made on both processes, storing one assignment and one exposure each', async () => {
    const experiment = await startExperiment('scaled-race');
    const units = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    const responses = await Promise.all(
      units.flatMap((unit_id) => [a, b, a, b].map((url) => call(url, key, 'POST', '/v1/assign', { experiment_key: 'scaled-race', unit_id }))),
    );
    for (const unit of units) {
      const answers = responses.filter((r) => r.body.unit_id === unit);
      expect(new Set(answers.map((r) => r.body.assignment_id)).size, unit).toBe(1);
    }
    const assignments = await db.selectFrom('assignments').select(['unit_id']).where('experiment_id', '=', experiment.id).execute();
    expect(assignments).toHaveLength(units.length);
    const exposures = await db.selectFrom('exposures').select(['unit_id']).where('experiment_id', '=', experiment.id).execute();
    expect(exposures).toHaveLength(units.length);
  });

  it('never double-assigns a unit across a mutex group, whichever process answers', async () => {
    const group = await call(a, key, 'POST', '/v1/mutex-groups', { key: 'scaled-mutex', name: 'Scaled mutex' });
    await startExperiment('mx-one', { mutex_group_id: group.body.id });
    await startExperiment('mx-two', { mutex_group_id: group.body.id });
    const units = Array.from({ length: 20 }, (_, i) => `mx-${i}`);
    const responses = await Promise.all(
      units.flatMap((unit_id) => [
        call(a, key, 'POST', '/v1/assign', { experiment_key: 'mx-one', unit_id }),
        call(b, key, 'POST', '/v1/assign', { experiment_key: 'mx-two', unit_id }),
      ]),
    );
    for (const unit of units) {
      const winners = responses.filter((r) => r.body.unit_id === unit && r.body.variant !== null);
      expect(winners, unit).toHaveLength(1);
    }
  });

  it('stores an event sent to both processes with the same client_event_id once', async () => {
    const events = Array.from({ length: 10 }, (_, i) => ({ event_key: 'purchase', unit_id: `buyer-${i}`, client_event_id: `dup-${i}` }));
    const responses = await Promise.all(events.flatMap((event) => [a, b].map((url) => call(url, key, 'POST', '/v1/events', event))));
    expect(responses.every((r) => r.status === 202)).toBe(true);
    expect(responses.filter((r) => r.body.idempotent_replay === false)).toHaveLength(events.length);
    const stored = await eventually(async () => {
      const rows = await db.selectFrom('events').select('client_event_id').where('event_key', '=', 'purchase').execute();
      return rows.length >= events.length && rows;
    });
    expect(stored).toHaveLength(events.length);
  });

  it('spreads changes made on one process to the other at once', async () => {
    const experiment = await startExperiment('scaled-change');
    expect((await call(b, key, 'POST', '/v1/assign', { experiment_key: 'scaled-change', unit_id: 'u1' })).status).toBe(200);
    await call(a, key, 'POST', `/v1/experiments/${experiment.id}/stop`, { reason: 'bug' });
    await eventually(async () => (await call(b, key, 'POST', '/v1/assign', { experiment_key: 'scaled-change', unit_id: 'u1' })).status === 404, 5_000);

    const created = await call(a, key, 'POST', '/v1/api-keys', { name: 'temp', kind: 'server' });
    expect((await call(b, created.body.key, 'GET', '/v1/workspaces/current')).status).toBe(200);
    await call(a, key, 'DELETE', `/v1/api-keys/${created.body.id}`);
    await eventually(async () => (await call(b, created.body.key, 'GET', '/v1/workspaces/current')).status === 401, 5_000);

    await startExperiment('scaled-rebucket');
    const first = await call(b, key, 'POST', '/v1/assign', { experiment_key: 'scaled-rebucket', unit_id: 'rb' });
    expect((await call(a, key, 'DELETE', '/v1/assignments/scaled-rebucket/rb')).status).toBe(204);
    await eventually(async () => {
      const again = await call(b, key, 'POST', '/v1/assign', { experiment_key: 'scaled-rebucket', unit_id: 'rb' });
      return again.body.assignment_id !== first.body.assignment_id;
    }, 5_000);
  });

  it('runs a job enqueued on an API process once, on the worker', async () => {
    const template = await call(a, key, 'POST', '/v1/templates', { name: 'Note', body: 'Hello {{name}}' });
    await call(a, key, 'POST', `/v1/templates/${template.body.id}/versions`);
    const render = await call(b, key, 'POST', '/v1/renders', { template_id: template.body.id, formats: ['text'], data: { name: 'Ada' } });
    expect(render.status).toBe(202);
    await eventually(async () => (await call(a, key, 'GET', `/v1/renders/${render.body.id}`)).body.status === 'resolved');
    const jobs = await db.selectFrom('jobs').selectAll().where('name', '=', 'templates.render').execute();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it('holds an Idempotency-Key across processes: one ingest, the other copy replayed or refused', async () => {
    const source = await call(a, key, 'POST', '/v1/webhook-sources', { slug: 'crm', name: 'CRM' });
    expect(source.status).toBe(201);
    const body = JSON.stringify({ events: [{ event_key: 'signup', unit_id: 'lead-1' }] });
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac('sha256', source.body.inbound_secret).update(`${t}.${body}`).digest('hex');
    const headers = { 'content-type': 'application/json', 'x-service-signature': `t=${t},v1=${v1}`, 'idempotency-key': 'delivery-42' };
    const path = `/webhooks/inbound/${deployment.bootstrap.workspaceId}/crm`;
    const responses = await Promise.all([a, b, a, b].map((url) => call(url, null, 'POST', path, body, headers)));
    expect(responses.every((r) => r.status === 202 || r.status === 409)).toBe(true);
    expect(responses.filter((r) => r.status === 202).length).toBeGreaterThanOrEqual(1);
    await eventually(async () => (await db.selectFrom('events').select('id').where('event_key', '=', 'signup').execute()).length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const stored = await db.selectFrom('events').select('id').where('event_key', '=', 'signup').execute();
    expect(stored).toHaveLength(1);
  });

  it('mirrors a task-tool status once even when the callback reaches both processes', async () => {
    await call(a, key, 'PUT', '/v1/task-tool/settings', { status_mapping: { 'in progress': 'working' } });
    const lead = await call(a, key, 'POST', '/v1/leads', { name: 'Ada', email: 'ada@example.com', status: 'new', task_tool_task_id: 'task-9' });
    expect(lead.status).toBe(201);
    const body = JSON.stringify({
      event: 'taskStatusUpdated',
      task_id: 'task-9',
      webhook_id: 'wh-1',
      history_items: [
        {
          id: 'hist-1',
          type: 1,
          date: String(Date.now()),
          field: 'status',
          before: { status: 'to do', type: 'open' },
          after: { status: 'In Progress', type: 'custom' },
        },
      ],
    });
    const signature = createHmac('sha256', deployment.bootstrap.webhookSecret).update(body).digest('hex');
    const path = `/webhooks/task-tool/${deployment.bootstrap.workspaceId}`;
    const responses = await Promise.all(
      [a, b].map((url) => call(url, null, 'POST', path, body, { 'content-type': 'application/json', 'x-signature': signature })),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    await eventually(async () => (await call(a, key, 'GET', `/v1/leads/${lead.body.id}`)).body.status === 'working');
    const jobs = await eventually(async () => {
      const rows = await db.selectFrom('jobs').selectAll().where('name', '=', 'webhooks.mirror_task_status').execute();
      return rows.length === 2 && rows.every((job) => job.status === 'succeeded') && rows;
    });
    expect(jobs.every((job) => job.attempts === 1)).toBe(true);
    const mirrored = await db.selectFrom('audit_entries').select('id').where('action', '=', 'lead.status_mirrored').execute();
    expect(mirrored).toHaveLength(1);
  });

  it('computes the scheduled analysis of an experiment once per cadence across both workers', async () => {
    const experiment = scheduled;
    // Both workers' schedulers tick as they start and find the experiment (running before they
    // started) due at once; the job key of its cadence period lets only one of them compute it.
    const snapshots = await eventually(async () => {
      const rows = await db.selectFrom('analysis_snapshots').selectAll().where('experiment_id', '=', experiment.id).execute();
      return rows.length > 0 && rows;
    }, 90_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await db.selectFrom('analysis_snapshots').select('id').where('experiment_id', '=', experiment.id).execute();
    expect(after).toHaveLength(snapshots.length);
    expect(after).toHaveLength(1);
    const computeJobs = await db
      .selectFrom('jobs')
      .selectAll()
      .where('name', '=', 'analysis.compute')
      .where('job_key', 'like', `analysis:${experiment.id}:%`)
      .execute();
    expect(computeJobs).toHaveLength(1);
    expect(computeJobs[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
  }, 120_000);

  it('reports readiness of the database and the buffer', async () => {
    const ready = await call(a, null, 'GET', '/v1/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: { status: 'ok' }, buffer: { status: 'ok' } } });
  });
});

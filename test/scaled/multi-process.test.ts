import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { call, eventually, startDeployment, type Deployment } from './processes.js';

const databaseUrl = process.env.VERDICT_TEST_DATABASE_URL;
const redisUrl = process.env.VERDICT_TEST_REDIS_URL;
const enabled = Boolean(databaseUrl && redisUrl);
if (!enabled) console.warn('[verdict] scaled-mode tests skipped: set VERDICT_TEST_DATABASE_URL and VERDICT_TEST_REDIS_URL');

describe.runIf(enabled)('scaled mode: two API processes and a worker on PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let deployment: Deployment;
  let db: Kysely<Database>;
  let key: string;
  let a: string;
  let b: string;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const url = database.config.kind === 'postgres' ? database.config.url : '';
    deployment = await startDeployment({ databaseUrl: url, redisUrl: redisUrl as string, dataDir: database.dataDir });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 2 }) }) });
    key = deployment.bootstrap.key;
    [a, b] = deployment.api.map((api) => api.url) as [string, string];
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
    await db?.destroy();
    await database?.drop();
  });

  async function startExperiment(experimentKey: string, extra: Record<string, unknown> = {}) {
    const created = await call(a, key, 'POST', '/v1/experiments', {
      environment_id: deployment.bootstrap.environmentId,
      key: experimentKey,
      name: experimentKey,
      hypothesis: 'h',
      unit_type: 'user',
      variants: [{ key: 'control', weight: 50 }, { key: 'treatment', weight: 50 }],
      ...extra,
    });
    expect(created.status).toBe(201);
    expect((await call(a, key, 'POST', `/v1/experiments/${created.body.id}/start`)).status).toBe(200);
    return created.body;
  }

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

  it('reports readiness of the database and the buffer', async () => {
    const ready = await call(a, null, 'GET', '/v1/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: { status: 'ok' }, buffer: { status: 'ok' } } });
  });
});

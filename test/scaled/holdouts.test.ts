import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { eventually } from '../support/processes.js';
import { call, startDeployment, type Deployment } from './processes.js';

const redisUrl = process.env.VERDICT_TEST_REDIS_URL;

describeEach('scaled mode: holdouts and launches agree on every API process', { dialects: ['postgres'], buffers: ['redis'] }, () => {
  let database: TestDatabase;
  let deployment: Deployment;
  let key: string;
  let a: string;
  let b: string;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    const url = database.config.kind === 'postgres' ? database.config.url : '';
    deployment = await startDeployment({ databaseUrl: url, redisUrl: redisUrl as string, dataDir: database.dataDir }, 1);
    key = deployment.bootstrap.key;
    [a, b] = deployment.api.map((api) => api.url) as [string, string];
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
    await database?.drop();
  });

  const units = Array.from({ length: 200 }, (_, i) => `scaled-${i}`);
  const answersOn = async (url: string, experimentKey: string) =>
    Promise.all(units.map(async (unit_id) => (await call(url, key, 'POST', '/v1/assign', { experiment_key: experimentKey, unit_id })).body));

  it('holds the same units out on both processes, before and after a launch', async () => {
    const environment_id = deployment.bootstrap.environmentId;
    const holdout = await call(a, key, 'POST', '/v1/holdouts', { environment_id, name: 'Scaled', unit_type: 'user', percent: 20 });
    expect(holdout.status).toBe(201);
    expect((await call(b, key, 'POST', `/v1/holdouts/${holdout.body.id}/start`)).status).toBe(200);
    const created = await call(a, key, 'POST', '/v1/experiments', {
      environment_id,
      key: 'scaled-held',
      name: 'Scaled held',
      hypothesis: 'h',
      unit_type: 'user',
      variants: [
        { key: 'control', weight: 50 },
        { key: 'treatment', weight: 50 },
      ],
    });
    expect((await call(a, key, 'POST', `/v1/experiments/${created.body.id}/start`)).status).toBe(200);

    const onA = await answersOn(a, 'scaled-held');
    const onB = await answersOn(b, 'scaled-held');
    const held = (answers: Array<{ unit_id: string; reason: string }>) => answers.filter((x) => x.reason === 'holdout').map((x) => x.unit_id);
    expect(held(onA).length).toBeGreaterThan(15);
    expect(held(onB)).toEqual(held(onA));
    expect(onB.map((x) => x.variant)).toEqual(onA.map((x) => x.variant));
    // Both processes saw every unit: the holdout's snapshot counts each held-out unit once.
    const snapshot = await call(b, key, 'POST', `/v1/holdouts/${holdout.body.id}/results/compute`);
    expect(snapshot.status).toBe(201);
    expect(snapshot.body.groups[0]).toMatchObject({ key: 'held_out', units: held(onA).length });
    expect(snapshot.body.groups[1].units).toBeGreaterThan(15);

    expect((await call(a, key, 'POST', `/v1/experiments/${created.body.id}/stop`, { reason: 'won' })).status).toBe(200);
    expect((await call(a, key, 'POST', `/v1/experiments/${created.body.id}/launch`, { variant_key: 'treatment' })).status).toBe(200);
    // The other process hears of the launch through the change relay (or its cache's TTL).
    const launchedOnB = await eventually(async () => {
      const answers = await answersOn(b, 'scaled-held');
      return answers.every((x) => x.reason === 'launched' || x.reason === 'holdout') ? answers : null;
    });
    expect(held(launchedOnB)).toEqual(held(onA));
    for (const answer of launchedOnB) expect(answer.variant).toBe(answer.reason === 'holdout' ? 'control' : 'treatment');
    expect(held(await answersOn(a, 'scaled-held'))).toEqual(held(onA));
  });
});

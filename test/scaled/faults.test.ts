import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDeployment, type Deployment } from './processes.js';
import { eventually } from '../support/processes.js';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

const redisUrl = process.env.VERDICT_TEST_REDIS_URL;
const enabled = Boolean(process.env.VERDICT_TEST_DATABASE_URL && redisUrl && privatePostgresAvailable());
if (!enabled) console.warn('[verdict] PostgreSQL restart test skipped: needs VERDICT_TEST_DATABASE_URL, VERDICT_TEST_REDIS_URL and initdb');

describe.runIf(enabled)('a PostgreSQL restart under running API and worker processes', () => {
  let postgres: PrivatePostgres;
  let deployment: Deployment;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-fault-'));

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    deployment = await startDeployment({ databaseUrl: postgres.url, redisUrl: redisUrl as string, dataDir });
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
    postgres?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reconnects API processes and workers by themselves', async () => {
    const [a, b] = deployment.api.map((api) => api.url) as [string, string];
    const { key } = deployment.bootstrap;
    const template = await call(a, key, 'POST', '/v1/templates', { name: 'Note', body: 'Hi {{name}}' });
    await call(a, key, 'POST', `/v1/templates/${template.body.id}/versions`);

    postgres.restart();

    // Pooled connections died with the server; requests may fail once, then the pools reconnect.
    for (const url of [a, b]) await eventually(async () => (await call(url, key, 'GET', '/v1/workspaces/current')).status === 200, 20_000);
    const ready = await eventually(async () => {
      const response = await call(a, null, 'GET', '/v1/readyz');
      return response.status === 200 && response;
    }, 20_000);
    expect(ready.body.checks.database.status).toBe('ok');
    const render = await eventually(async () => {
      const response = await call(b, key, 'POST', '/v1/renders', { template_id: template.body.id, formats: ['text'], data: { name: 'Ada' } });
      return response.status === 202 && response;
    }, 20_000);
    const done = await eventually(async () => {
      const response = await call(a, key, 'GET', `/v1/renders/${render.body.id}`);
      return response.body.status === 'resolved' && response;
    }, 30_000);
    expect(done.body.outputs.map((o: { format: string }) => o.format)).toEqual(['text']);
  });

  it('answers 503 readiness while the database is down, and recovers', async () => {
    const [a] = deployment.api.map((api) => api.url) as [string];
    postgres.stop();
    try {
      const down = await eventually(async () => {
        const response = await call(a, null, 'GET', '/v1/readyz');
        return response.status === 503 && response;
      }, 20_000);
      expect(down.body.checks.database.status).toBe('unavailable');
    } finally {
      postgres.start();
    }
    await eventually(async () => (await call(a, null, 'GET', '/v1/readyz')).status === 200, 20_000);
  });
});

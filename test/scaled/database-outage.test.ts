import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startDeployment, type Deployment } from './processes.js';
import { eventually } from '../support/processes.js';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

const redisUrl = process.env.VERDICT_TEST_REDIS_URL;
const enabled = Boolean(process.env.VERDICT_TEST_DATABASE_URL && redisUrl && privatePostgresAvailable());
if (!enabled) console.warn('[verdict] PostgreSQL restart-under-load test skipped: needs VERDICT_TEST_DATABASE_URL, VERDICT_TEST_REDIS_URL and initdb');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Keeps posting events to the API processes until stopped and remembers each one answered 202.
 * Every event has a unit of its own, so the events table shows whether each was stored once.
 */
function eventLoad(urls: string[], key: string, loops = 4) {
  const acknowledged: string[] = [];
  const statuses = new Map<number | string, number>();
  let running = true;
  const loop = async (lane: number) => {
    for (let i = 0; running; i++) {
      const unit = `restart-${lane}-${i}`;
      const url = urls[i % urls.length] as string;
      try {
        const response = await call(url, key, 'POST', '/v1/events', { event_key: 'restart', unit_id: unit });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status === 202) acknowledged.push(unit);
      } catch (error) {
        statuses.set(String((error as Error).message), (statuses.get(String((error as Error).message)) ?? 0) + 1);
        await sleep(20);
      }
    }
  };
  const lanes = Array.from({ length: loops }, (_, lane) => loop(lane));
  return {
    acknowledged,
    statuses,
    async stop() {
      running = false;
      await Promise.all(lanes);
    },
  };
}

/**
 * Holds exclusive locks on the tables the processes' next queries need, so those queries are
 * deterministically in flight (and their pool clients checked out, mid-transaction where the
 * work is a transaction) when the server goes down.
 */
async function tableBlocker(url: string) {
  const client = new pg.Client({ connectionString: url });
  // The restart ends this connection too; that is expected here.
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  return {
    lock: (tables: string[]) => client.query(`LOCK TABLE ${tables.join(', ')} IN ACCESS EXCLUSIVE MODE`),
    end: () => client.end().catch(() => undefined),
  };
}

describe.runIf(enabled)('PostgreSQL restarting or down under running API and worker processes', () => {
  let postgres: PrivatePostgres;
  let deployment: Deployment;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-restart-'));

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    // A short lease, so the job the restart interrupts runs again within the test, and a short
    // key cache, so it lapses during the outage.
    const env = { VERDICT_JOB_LEASE_MS: '3000', VERDICT_KEY_CACHE_TTL_MS: '1000' };
    deployment = await startDeployment({ databaseUrl: postgres.url, redisUrl: redisUrl as string, dataDir, env });
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
    postgres?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const alive = () => [...deployment.api.map((api) => api.process), ...deployment.workers].map((child) => child.exitCode === null && child.signalCode === null);

  it('keeps ingest going for keys verified before the database went down, and answers 503 + Retry-After to the rest', async () => {
    const [a, b] = deployment.api.map((api) => api.url) as [string, string];
    const { key } = deployment.bootstrap;
    // A key created on one process and never used on the other.
    const unseen = await call(a, key, 'POST', '/v1/api-keys', { name: 'unseen', kind: 'client' });
    expect(unseen.status).toBe(201);
    const track = (apiKey: string, unit: string) => send(b, apiKey, 'POST', '/v1/events', { event_key: 'outage', unit_id: unit });
    expect((await track(key, 'before')).status).toBe(202);
    // A key used on b, then revoked on a: b must not admit it from what it remembers.
    const revoked = await call(a, key, 'POST', '/v1/api-keys', { name: 'revoked', kind: 'client' });
    expect((await track(revoked.body.key, 'revoked-before')).status).toBe(202);
    expect((await call(a, key, 'DELETE', `/v1/api-keys/${revoked.body.id}`)).status).toBe(204);
    await eventually(async () => (await track(revoked.body.key, 'revoked-probe')).status === 401);

    postgres.stop();
    try {
      await sleep(1_500); // past the key cache's 1 s
      const known = await track(key, 'during');
      expect(known.status).toBe(202);

      const refused = await track(unseen.body.key, 'refused');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(refused.body).toMatchObject({ type: 'https://verdict.dev/problems/unavailable', status: 503 });
      expect(refused.body.detail).toMatch(/API key cannot be verified/);

      expect((await track(revoked.body.key, 'revoked-during')).status).toBe(401);

      // A request that needs the database itself answers 503 too, not 500.
      const listing = await send(b, key, 'GET', '/v1/api-keys');
      expect(listing.status).toBe(503);
      expect(listing.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    } finally {
      postgres.start();
    }

    await eventually(async () => (await track(unseen.body.key, 'after')).status === 202, 10_000);
    // Probes sent while the revocation travelled to b may be stored too; they are not counted.
    const stored = await storedOnce(postgres.url, 'outage', ['before', 'during', 'revoked-before', 'after']);
    expect([...stored.keys()].filter((unit) => unit !== 'revoked-probe').sort()).toEqual(['after', 'before', 'during', 'revoked-before']);
    expect(alive()).toEqual([true, true, true]);
  }, 60_000);

  it('keeps every process running, serves again within seconds and stores each acknowledged event once', async () => {
    const urls = deployment.api.map((api) => api.url);
    const { key } = deployment.bootstrap;
    const template = await call(urls[0] as string, key, 'POST', '/v1/templates', { name: 'Note', body: 'Hi {{name}}' });
    expect((await call(urls[0] as string, key, 'POST', `/v1/templates/${template.body.id}/versions`)).status).toBe(201);

    const load = eventLoad(urls, key);
    await eventually(async () => load.acknowledged.length >= 50);

    // A render job stops in the worker where it stores its outputs (inside a transaction).
    const blocker = await tableBlocker(postgres.url);
    await blocker.lock(['render_outputs']);
    const running = await call(urls[1] as string, key, 'POST', '/v1/renders', { template_id: template.body.id, formats: ['text'], data: { name: 'Bo' } });
    expect(running.status).toBe(202);
    await eventually(async () => (await call(urls[0] as string, key, 'GET', `/v1/renders/${running.body.id}`)).body.status === 'running');
    // Creating a key waits on api_keys inside its transaction on each API process, the worker's
    // next job claim waits on jobs, and the drainer's insert on events inside its transaction.
    await blocker.lock(['api_keys', 'jobs', 'events']);
    const inFlight = urls.map((url, i) => call(url, key, 'POST', '/v1/api-keys', { name: `in-flight-${i}`, kind: 'client' }).catch((error: Error) => error));
    await sleep(500);
    postgres.restart();
    await blocker.end();
    const interrupted = await Promise.all(inFlight);

    // Every process is still running, and each serves a database-backed request within seconds.
    await sleep(1_000);
    expect(alive()).toEqual([true, true, true]);
    const restartedAt = Date.now();
    for (const url of urls) await eventually(async () => (await call(url, key, 'GET', '/v1/api-keys')).status === 200, 10_000);
    expect(Date.now() - restartedAt).toBeLessThan(10_000);
    // The interrupted requests got an answer, not a dropped connection, and never a 500.
    for (const answer of interrupted) {
      expect(answer).not.toBeInstanceOf(Error);
      expect([201, 503]).toContain((answer as { status: number }).status);
    }

    // The worker runs jobs again: a render requested now is resolved.
    const render = await eventually(async () => {
      const response = await call(urls[1] as string, key, 'POST', '/v1/renders', { template_id: template.body.id, formats: ['text'], data: { name: 'Ada' } });
      return response.status === 202 && response;
    }, 10_000);
    await eventually(async () => (await call(urls[0] as string, key, 'GET', `/v1/renders/${render.body.id}`)).body.status === 'resolved', 20_000);
    // The render interrupted by the restart is retried and resolved too.
    await eventually(async () => (await call(urls[0] as string, key, 'GET', `/v1/renders/${running.body.id}`)).body.status === 'resolved', 30_000);

    await sleep(500);
    await load.stop();
    expect(load.statuses.get(500)).toBeUndefined();

    // Every event answered 202 (before, during and after the restart) is stored exactly once.
    await storedOnce(postgres.url, 'restart', load.acknowledged);
    expect(alive()).toEqual([true, true, true]);
  }, 120_000);
});

/**
 * Waits until every one of `units` has its event of `eventKey` in the events table, asserts each
 * is there exactly once, and returns the count of every unit stored with that key.
 */
async function storedOnce(databaseUrl: string, eventKey: string, units: string[]): Promise<Map<string, number>> {
  const reader = new pg.Client({ connectionString: databaseUrl });
  await reader.connect();
  try {
    const counts = await eventually(async () => {
      const { rows } = await reader.query<{ unit_id: string; n: number }>(
        'SELECT unit_id, count(*)::int AS n FROM events WHERE event_key = $1 GROUP BY unit_id',
        [eventKey],
      );
      const stored = new Map(rows.map((row) => [row.unit_id, row.n]));
      return units.every((unit) => stored.has(unit)) && stored;
    }, 20_000);
    expect(units.filter((unit) => counts.get(unit) !== 1)).toEqual([]);
    return counts;
  } finally {
    await reader.end();
  }
}

/** Like `call`, with the response headers. */
async function send(url: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

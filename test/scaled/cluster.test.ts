import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, stopProcess } from '../support/processes.js';

interface Answer {
  status: number;
  body: any;
}

/** One request on a connection of its own: the cluster hands each new connection to the next process. */
function callOnNewConnection(url: string, key: string, method: string, requestPath: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url + requestPath,
      {
        method,
        agent: false,
        headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** The HTTP processes the primary runs (its children running the same command). */
function servingChildren(primary: ChildProcess): number[] {
  // ps exits 1 when there are none yet, which is an answer, not a failure.
  const listing = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(primary.pid)], { encoding: 'utf8' }).stdout;
  return listing
    .split('\n')
    .filter((line) => line.includes('verdict.js serve'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

interface Cluster {
  dataDir: string;
  primary: ChildProcess;
  url: string;
  key: string;
  environmentId: string;
  /** What the primary and its processes logged (info level) so far. */
  log(): string;
}

/** A bootstrapped data directory and `serve --processes 2` on it, once both processes serve. */
async function startCluster(): Promise<Cluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-cluster-'));
  // Caches that would outlive the test: only the relay between the processes can explain fresh answers.
  const env = {
    VERDICT_DATA_DIR: dataDir,
    VERDICT_LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    VERDICT_ASSIGNMENT_CACHE_TTL_MS: '600000',
    VERDICT_KEY_CACHE_TTL_MS: '600000',
  };
  const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', 'Cluster', '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(created.stderr);
  const bootstrap = JSON.parse(created.stdout);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const primary = spawn(process.execPath, ['bin/verdict.js', 'serve', '--processes', '2', '--port', String(port)], {
    env: { ...process.env, ...env, VERDICT_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  primary.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  await eventually(async () => servingChildren(primary).length === 2 && (await fetch(`${url}/v1/healthz`).catch(() => null))?.ok, 60_000);
  return { dataDir, primary, url, key: bootstrap.api_key.key, environmentId: bootstrap.environment.id, log: () => log };
}

async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  if (!cluster) return;
  await stopProcess(cluster.primary);
  fs.rmSync(cluster.dataDir, { recursive: true, force: true });
}

describe('serve --processes 2 on the embedded database', () => {
  let cluster: Cluster | undefined;
  let primary: ChildProcess;
  let url: string;
  let key: string;
  let environmentId: string;
  /** The processes that logged that they serve (each logs its pid once it listens). */
  const listeningPids = (): Set<number> =>
    new Set(
      (cluster?.log() ?? '')
        .split('\n')
        .filter((line) => line.includes('"msg":"Verdict is serving'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid),
    );

  beforeAll(async () => {
    cluster = await startCluster();
    ({ primary, url, key, environmentId } = cluster);
  }, 90_000);

  afterAll(async () => {
    await stopCluster(cluster);
  });

  const assignAll = async (unitId: string, times = 8): Promise<Answer[]> =>
    Promise.all(Array.from({ length: times }, () => callOnNewConnection(url, key, 'POST', '/v1/assign', { experiment_key: 'cluster-exp', unit_id: unitId })));

  it('tells every process of an override and a re-bucket at once, though their caches would keep the old answer', async () => {
    const experiment = await callOnNewConnection(url, key, 'POST', '/v1/experiments', {
      environment_id: environmentId,
      key: 'cluster-exp',
      name: 'Cluster',
      hypothesis: 'h',
      unit_type: 'user',
      variants: [
        { key: 'control', weight: 50 },
        { key: 'treatment', weight: 50 },
      ],
    });
    expect(experiment.status).toBe(201);
    expect((await callOnNewConnection(url, key, 'POST', `/v1/experiments/${experiment.body.id}/start`)).status).toBe(200);

    const first = await assignAll('u-1');
    expect(new Set(first.map((a) => a.body.assignment_id)).size).toBe(1);
    const bucketed = first[0]?.body.variant as string;
    const other = bucketed === 'control' ? 'treatment' : 'control';

    const pinned = await callOnNewConnection(url, key, 'PUT', `/v1/experiments/${experiment.body.id}/overrides/u-1`, { variant: other });
    expect(pinned.status).toBe(200);
    for (const answer of await assignAll('u-1')) expect(answer.body).toMatchObject({ variant: other, reason: 'forced' });

    expect((await callOnNewConnection(url, key, 'DELETE', `/v1/experiments/${experiment.body.id}/overrides/u-1`)).status).toBe(204);
    for (const answer of await assignAll('u-1')) expect(answer.body).toMatchObject({ variant: bucketed, assignment_id: first[0]?.body.assignment_id });

    expect((await callOnNewConnection(url, key, 'DELETE', `/v1/assignments/cluster-exp/u-1`)).status).toBe(204);
    const again = await assignAll('u-1');
    const ids = new Set(again.map((a) => a.body.assignment_id));
    expect(ids.size).toBe(1);
    expect(ids.has(first[0]?.body.assignment_id)).toBe(false);
  });

  it('stores events acknowledged by either process exactly once, replays included', async () => {
    const events = Array.from({ length: 30 }, (_, i) => ({ event_key: 'purchase', unit_id: `u-${i}`, client_event_id: `cluster-${i}` }));
    const first = await Promise.all(events.map((event) => callOnNewConnection(url, key, 'POST', '/v1/events', event)));
    const replays = await Promise.all(events.map((event) => callOnNewConnection(url, key, 'POST', '/v1/events', event)));
    expect(first.map((a) => [a.status, a.body.idempotent_replay])).toEqual(events.map(() => [202, false]));
    expect(replays.map((a) => [a.status, a.body.idempotent_replay])).toEqual(events.map(() => [202, true]));
    const db = new BetterSqlite3(path.join((cluster as Cluster).dataDir, 'verdict.sqlite'), { readonly: true });
    try {
      const stored = await eventually(async () => {
        const row = db.prepare("select count(*) as n from events where client_event_id like 'cluster-%'").get() as { n: number };
        return row.n === events.length ? row.n : false;
      });
      expect(stored).toBe(30);
    } finally {
      db.close();
    }
  });

  it('starts a process again when one dies, and keeps serving meanwhile', async () => {
    const [victim, survivor] = servingChildren(primary) as [number, number];
    process.kill(victim, 'SIGKILL');
    const replaced = await eventually(async () => {
      const now = servingChildren(primary);
      return now.length === 2 && !now.includes(victim) ? now : false;
    }, 30_000);
    expect(replaced).toContain(survivor);
    const answers = await Promise.all(Array.from({ length: 6 }, () => callOnNewConnection(url, key, 'GET', '/v1/workspaces/current')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('keeps serving when a restarted process is killed again before it listens, and restarts it after a longer wait', async () => {
    // Both processes listen (the one started by the previous test may still be loading).
    const [victim, survivor] = await eventually(async () => {
      const pids = servingChildren(primary);
      return pids.length === 2 && pids.every((pid) => listeningPids().has(pid)) && (pids as [number, number]);
    }, 30_000);
    process.kill(victim, 'SIGKILL');
    const restarted = await eventually(async () => servingChildren(primary).find((pid) => pid !== victim && pid !== survivor), 30_000);
    // Killed again at once, long before it can load and listen.
    process.kill(restarted, 'SIGKILL');
    const killedAt = Date.now();
    const answers = await Promise.all(Array.from({ length: 4 }, () => callOnNewConnection(url, key, 'GET', '/v1/workspaces/current')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const replacement = await eventually(async () => servingChildren(primary).find((pid) => ![victim, survivor, restarted].includes(pid)), 30_000);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1_900);
    expect(primary.exitCode).toBeNull();
    await eventually(async () => {
      const all = await Promise.all(Array.from({ length: 6 }, () => callOnNewConnection(url, key, 'GET', '/v1/workspaces/current').catch(() => null)));
      return all.every((a) => a?.status === 200) && servingChildren(primary).includes(replacement);
    }, 30_000);
    expect(servingChildren(primary).sort()).toEqual([survivor, replacement].sort());
  }, 90_000);

  // Last, as the end of the cluster the tests above used (one of its processes killed twice and started again).
  it('stops every process on SIGTERM and exits 0', async () => {
    const children = servingChildren(primary);
    expect(children).toHaveLength(2);
    const exited = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)));
    primary.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of children) expect(() => process.kill(pid, 0)).toThrow();
  }, 90_000);
});

describe('serve --processes 2 that cannot listen', () => {
  it('exits 1 with the reason instead of starting processes again and again', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-cluster-taken-'));
    const port = await freePort();
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const result = spawnSync(process.execPath, ['bin/verdict.js', 'serve', '--processes', '2', '--port', String(port)], {
        env: { ...process.env, VERDICT_DATA_DIR: dataDir, VERDICT_LOG_LEVEL: 'warn', HOST: '127.0.0.1' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('EADDRINUSE');
      const givingUp = result.stdout
        .split('\n')
        .filter((line) => line.includes('no HTTP process has listened since start'))
        .map((line) => JSON.parse(line) as { code: number; reason: string });
      expect(givingUp).toEqual([expect.objectContaining({ code: 1, reason: expect.stringContaining('EADDRINUSE') })]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

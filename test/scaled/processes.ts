import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { createWorkspaceWithCli, freePort, spawnVerdict, stopProcess, waitHealthy } from '../support/processes.js';

export interface Deployment {
  env: Record<string, string>;
  api: { url: string; process: ChildProcess }[];
  workers: ChildProcess[];
  bootstrap: { key: string; workspaceId: string; environmentId: string; webhookSecret: string };
  stop(): Promise<void>;
}

/** What is up when the workers start: the bootstrap and the two API processes, healthy. */
export type BeforeWorkers = (started: Pick<Deployment, 'api' | 'bootstrap'>) => Promise<void>;

/**
 * Two `serve --no-workers` API processes and `worker` processes sharing PostgreSQL and Redis.
 * `beforeWorkers` runs once the API answers and before any worker starts (so before the first
 * scheduler tick): what it creates is there for that tick.
 */
export async function startDeployment(
  base: { databaseUrl: string; redisUrl: string; dataDir: string; env?: Record<string, string> },
  workers = 1,
  beforeWorkers?: BeforeWorkers,
): Promise<Deployment> {
  const env: Record<string, string> = {
    VERDICT_DATABASE_URL: base.databaseUrl,
    VERDICT_REDIS_URL: base.redisUrl,
    VERDICT_REDIS_PREFIX: `verdict-test-${crypto.randomUUID().slice(0, 8)}:`,
    VERDICT_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    VERDICT_DATA_DIR: base.dataDir,
    VERDICT_LOG_LEVEL: 'warn',
    VERDICT_JOB_POLL_MS: '100',
    HOST: '127.0.0.1',
    ...base.env,
  };
  const bootstrap = createWorkspaceWithCli(env, 'Scaled');
  const api: Deployment['api'] = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = spawnVerdict(['serve', '--no-workers', '--port', String(port)], env);
    api.push({ url: `http://127.0.0.1:${port}`, process: child });
  }
  let workerProcesses: ChildProcess[] = [];
  if (beforeWorkers) {
    await Promise.all(api.map((a) => waitHealthy(a.url, a.process)));
    await beforeWorkers({ api, bootstrap });
    workerProcesses = Array.from({ length: workers }, () => spawnVerdict(['worker'], env));
  } else {
    workerProcesses = Array.from({ length: workers }, () => spawnVerdict(['worker'], env));
    await Promise.all(api.map((a) => waitHealthy(a.url, a.process)));
  }
  return {
    env,
    api,
    workers: workerProcesses,
    bootstrap,
    async stop() {
      await Promise.all([...api.map((a) => stopProcess(a.process)), ...workerProcesses.map((w) => stopProcess(w))]);
    },
  };
}

export async function call(url: string, key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url + path, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as any) : null };
}

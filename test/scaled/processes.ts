import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import { freePort } from '../support/net.js';

export { freePort };

export interface Deployment {
  env: Record<string, string>;
  api: { url: string; process: ChildProcess }[];
  workers: ChildProcess[];
  bootstrap: { key: string; workspaceId: string; environmentId: string; webhookSecret: string };
  stop(): Promise<void>;
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/v1/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

export function startProcess(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['bin/verdict.js', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/** Two `serve --no-workers` API processes and `worker` processes sharing PostgreSQL and Redis. */
export async function startDeployment(
  base: { databaseUrl: string; redisUrl: string; dataDir: string; env?: Record<string, string> },
  workers = 1,
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
  const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', 'Scaled', '--json'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(created.stderr);
  const parsed = JSON.parse(created.stdout);
  const api: Deployment['api'] = [];
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    const child = startProcess(['serve', '--no-workers', '--port', String(port)], env);
    api.push({ url: `http://127.0.0.1:${port}`, process: child });
  }
  const workerProcesses = Array.from({ length: workers }, () => startProcess(['worker'], env));
  await Promise.all(api.map((a) => waitHealthy(a.url, a.process)));
  return {
    env,
    api,
    workers: workerProcesses,
    bootstrap: { key: parsed.api_key.key, workspaceId: parsed.workspace.id, environmentId: parsed.environment.id, webhookSecret: parsed.webhook_secret },
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

export async function eventually<T>(probe: () => Promise<T | false | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// Support for the stop tests (shutdown*.test.ts): real `verdict` processes on a private database,
// the workload of issue 39 on them, and a log reader that reads, stalls or goes away.
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { testRedisUrl, type Variant } from '../support/describe-each.js';
import { createWorkspaceWithCli, eventually, freePort, spawnVerdict, waitHealthy } from '../support/processes.js';

/** What the test does with the process's stdout, the service log: read it, stop reading it (the pipe stays open), or close it. */
export type Reader = 'reading' | 'stalled' | 'gone';

export interface Verdict {
  child: ChildProcess;
  /** What was read of the log so far (nothing once stalled or gone). */
  log(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Stops reading the log but keeps the pipe open (a reader that stalls), or closes it (a reader gone). */
  setReader(reader: Reader): void;
}

/** A private database (and for PostgreSQL a Redis prefix of its own) with a bootstrapped workspace. */
export interface Site {
  env: Record<string, string>;
  key: string;
  drop(): Promise<void>;
}

export async function createSite(variant: Variant): Promise<Site> {
  const database: TestDatabase = await createTestDatabase(variant.dialect);
  const env: Record<string, string> = {
    VERDICT_DATA_DIR: database.dataDir,
    VERDICT_DATABASE_URL: database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`,
    VERDICT_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    VERDICT_LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
  };
  const redisUrl = testRedisUrl();
  if (variant.buffer === 'redis' && redisUrl) {
    env.VERDICT_REDIS_URL = redisUrl;
    env.VERDICT_REDIS_PREFIX = `verdict-stop-${crypto.randomUUID().slice(0, 8)}:`;
  }
  const { key } = createWorkspaceWithCli(env, 'Stop');
  return { env, key, drop: () => database.drop() };
}

/** The suite's site, created before its tests and dropped after them; no process a test started outlives the test. */
export function useSite(variant: Variant): () => Site {
  let site: Site | undefined;
  beforeAll(async () => {
    site = await createSite(variant);
  });
  afterEach(() => killLeftovers());
  afterAll(async () => {
    await site?.drop();
  });
  return () => {
    if (!site) throw new Error('the site has not been created');
    return site;
  };
}

/** Every process the stop tests started, so that a test failing before its stop leaves none behind. */
const started = new Set<ChildProcess>();

/** Kills (SIGKILL) what a test started and did not see exit; `serve --processes` children go with the primary's process group. */
export function killLeftovers(): void {
  for (const child of started) killGroup(child);
  started.clear();
}

function killGroup(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
}

/**
 * `verdict serve` for the tests of a suite (started before them, killed after them), not for a
 * test to stop: the API a `verdict worker` under test shares its database with.
 */
export function useSuiteServe(site: () => Site, args: string[] = []): () => Verdict & { url: string } {
  let serve: (Verdict & { url: string }) | undefined;
  beforeAll(async () => {
    serve = await startServe(site(), args);
    started.delete(serve.child); // it outlives each test
  });
  afterAll(() => {
    if (serve) killGroup(serve.child);
  });
  return () => {
    if (!serve) throw new Error("the suite's serve has not started");
    return serve;
  };
}

/** `verdict <args>` with its log piped to this test (in a process group of its own); stderr is collected into the same log. */
export function startVerdict(args: string[], env: Record<string, string>): Verdict {
  const child = spawnVerdict(args, env, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.add(child);
  let log = '';
  let reading = true;
  child.stdout?.on('data', (chunk: Buffer) => {
    if (reading) log += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    log: () => log,
    exited,
    setReader(reader) {
      if (reader === 'stalled') child.stdout?.pause();
      if (reader === 'gone') child.stdout?.destroy();
      reading = reader === 'reading';
    },
  };
}

/** `verdict serve` on a free port, once it answers. */
export async function startServe(site: Site, args: string[] = [], env: Record<string, string> = {}): Promise<Verdict & { url: string }> {
  const port = await freePort();
  const verdict = startVerdict(['serve', '--port', String(port), ...args], { ...site.env, ...env });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, verdict.child, { output: verdict.log });
  return { ...verdict, url };
}

async function call(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** The experiment the workload's sticky hits ask for, and how many units were assigned. */
export interface Workload {
  experimentKey: string;
  units: number;
}

/** A running experiment with `units` units assigned: what the sticky hits of the workload ask for again. */
export async function prepareWorkload(url: string, key: string, units: number): Promise<Workload> {
  const experimentKey = `stop-${crypto.randomUUID().slice(0, 8)}`;
  const environments = await call(url, key, 'GET', '/v1/environments');
  const variants = [
    { key: 'control', weight: 50 },
    { key: 'treatment', weight: 50 },
  ];
  const experiment = await call(url, key, 'POST', '/v1/experiments', {
    environment_id: environments.data[0].id,
    key: experimentKey,
    name: experimentKey,
    hypothesis: 'a stop always ends',
    unit_type: 'user',
    variants,
  });
  await call(url, key, 'POST', `/v1/experiments/${experiment.id}/start`);
  for (let first = 0; first < units; first += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, units - first) }, (_, n) =>
        call(url, key, 'POST', '/v1/assign', { experiment_key: experimentKey, unit_id: `u-${first + n}` }),
      ),
    );
  }
  return { experimentKey, units };
}

let sequence = 0;

/** Issue 39's workload while it runs: how many requests were answered so far, its end, and a way to end it early. */
export interface Load {
  answered(): number;
  /** Resolves with the requests answered, once every route ran its time or the load was stopped. */
  done: Promise<number>;
  stop(): void;
}

/**
 * Issue 39's workload on keep-alive connections, one route after the other for `seconds` each:
 * sticky assign hits, single events with a client_event_id, GET /v1/workspaces/current.
 */
export function startWorkload(url: string, key: string, { experimentKey, units }: Workload, seconds: number): Load {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const run = crypto.randomUUID().slice(0, 8);
  const routes: autocannon.Request[] = [
    {
      method: 'POST',
      path: '/v1/assign',
      setupRequest: (r) => ({ ...r, body: JSON.stringify({ experiment_key: experimentKey, unit_id: `u-${sequence++ % units}` }) }),
    },
    {
      method: 'POST',
      path: '/v1/events',
      setupRequest: (r) => ({
        ...r,
        body: JSON.stringify({ event_key: 'purchase', unit_id: `u-${sequence % units}`, client_event_id: `${run}-${sequence++}` }),
      }),
    },
    { method: 'GET', path: '/v1/workspaces/current' },
  ];
  let answered = 0;
  let stopped = false;
  let current: autocannon.Instance | undefined;
  const done = (async () => {
    for (const route of routes) {
      if (stopped) break;
      await new Promise<void>((resolve, reject) => {
        current = autocannon({ url, connections: 32, duration: seconds, headers, requests: [route] }, (error) => (error ? reject(error as Error) : resolve()));
        current.on('response', () => void (answered += 1));
      });
    }
    return answered;
  })();
  return {
    answered: () => answered,
    done,
    stop() {
      stopped = true;
      current?.stop();
    },
  };
}

/** The whole workload (`seconds` for each route); how many requests were answered. */
export function runWorkload(url: string, key: string, workload: Workload, seconds: number): Promise<number> {
  return startWorkload(url, key, workload, seconds).done;
}

/**
 * A load in flight: resolves once `requests` of it were answered (their access lines, a few
 * hundred bytes each, more than fill a 64 KiB pipe that nobody reads), rather than after a fixed time that a
 * fast or a loaded machine turns into too little or too much.
 */
export async function underLoad(load: Load, requests = 500): Promise<void> {
  await eventually(async () => load.answered() >= requests, 60_000, `${requests} requests of the load answered`);
}

/** Waits for the exit, at most `withinMs`; the code, or 'still running' (then the process is killed, so nothing is left behind). */
export async function exitWithin(verdict: Verdict, withinMs: number): Promise<number | null | 'still running'> {
  const outcome = await Promise.race([verdict.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), withinMs))]);
  if (outcome === 'still running') verdict.child.kill('SIGKILL');
  return outcome;
}

/** Whether a process of this id still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The JSON lines of a log that carry this message. */
export function linesWith(log: string, msg: string): any[] {
  return log
    .split('\n')
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null; // stderr text, or a line cut off by a reader that stopped reading
      }
    })
    .filter((line) => line?.msg === msg);
}

/** The log without its access lines: what a failed stop test shows. */
export function stopLines(log: string): string {
  return log
    .split('\n')
    .filter((line) => !line.includes('"msg":"request"'))
    .join('\n')
    .slice(-4_000);
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Samples } from './samples.js';

export interface BenchServer {
  url: string;
  /** The server's process id: its CPU time (and its children's) is read around each measurement. */
  pid: number;
  key: string;
  workspaceId: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

export interface RequestSpec {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** Builds each request anew (unique unit ids, event ids...). Overrides path/body. */
  next?: () => { path?: string; body?: string };
  /**
   * Bodies the connections send in turn (each its own share), built once. Cheaper for the load generator than
   * `next` (which has it rebuild every request), and the generator shares the machine's cores
   * with the server; for requests that may repeat (a pool of known units).
   */
  bodies?: string[];
}

export interface Scenario {
  name: string;
  description: string;
  /** Prepares data through the API before load starts and returns the request to load with. */
  prepare(server: BenchServer): Promise<RequestSpec>;
  /** Items per request (a batch of 500 events counts 500), for a throughput figure. */
  itemsPerRequest?: number;
  /** Runs after the load and returns a line to print (for example the state of a queue). */
  afterLoad?(server: BenchServer): Promise<string>;
  /**
   * Other traffic sent to Verdict, on connections of its own, while the scenario's own request is
   * measured (not while the baselines are): what that route costs when the server is also busy with it.
   */
  background?: { name: string; connections: number; prepare(server: BenchServer): Promise<RequestSpec> };
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latency percentiles of the 2xx responses, in milliseconds, to the microsecond. */
  p50: number;
  p99: number;
  /** Mean latency of the 2xx responses, in milliseconds. */
  meanMs: number;
  /**
   * Connections divided by requests/s: by Little's law the mean time of one request's round
   * trip through the closed loop, that is the mean latency plus the load generator's own gap
   * between a response and its next request. Far above the mean, the generator is the bottleneck.
   */
  cycleMs: number;
  /**
   * CPU time the server's processes spent per completed request, in microseconds (Linux, from
   * /proc), or null where it cannot be read. Unlike req/s it barely moves when other work shares
   * the machine, so its ratio to the bare route is the steadier measure of the stack's cost.
   */
  cpuMicrosPerRequest: number | null;
  errors: number;
  non2xx: number;
}

const root = path.resolve(import.meta.dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/v1/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not become healthy in time');
}

/**
 * What an interrupted benchmark leaves behind otherwise: the servers it started (a soak's runs at
 * nice -5 and would skew whatever runs next) and their data directories (1-2 GB for a soak).
 * Undone when the benchmark exits, also on Ctrl-C or a kill with SIGTERM.
 */
const leftovers = new Set<() => void>();
let exitHooked = false;

function onExit(undo: () => void): () => void {
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => leftovers.forEach((each) => each()));
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
  }
  leftovers.add(undo);
  return () => leftovers.delete(undo);
}

/**
 * Starts `verdict serve` as a separate process on a fresh data directory (or the configured
 * PostgreSQL/Redis), bootstraps a workspace with the CLI, and returns its key. `nodeArgs` go to
 * the server's node (for example --cpu-prof, to see where a scenario spends its time).
 */
export async function startBenchServer(
  extraEnv: Record<string, string> = {},
  nodeArgs: string[] = [],
  beforeServe: (dataDir: string, workspaceId: string) => Promise<void> = async () => undefined,
): Promise<BenchServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bench-'));
  const port = await freePort();
  // Verdict's default configuration, log level included, as users run it: the request log is
  // part of what a request costs. Its lines go to /dev/null (stdout ignored).
  const env = { ...process.env, VERDICT_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', VERDICT_BENCH_ROUTES: '1', ...extraEnv } as Record<
    string,
    string
  >;
  const forgetDataDir = onExit(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', 'Bench', '--json'], { cwd: root, env, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`bootstrap failed: ${created.stderr}`);
  const bootstrap = JSON.parse(created.stdout) as { api_key: { key: string }; workspace: { id: string } };
  await beforeServe(dataDir, bootstrap.workspace.id);
  const child = spawn(process.execPath, [...nodeArgs, 'bin/verdict.js', 'serve'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const forgetChild = onExit(() => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  // A server that never became healthy must not outlive the benchmark that gave up on it.
  await waitForHealth(url, child).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    url,
    pid: child.pid as number,
    key: bootstrap.api_key.key,
    workspaceId: bootstrap.workspace.id,
    env,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      forgetChild();
      fs.rmSync(dataDir, { recursive: true, force: true });
      forgetDataDir();
    },
  };
}

export interface BareServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the bare Fastify baseline (bench/lib/bare-fastify.ts) in its own process; `nodeArgs` go to its node. */
export async function startBareServer(nodeArgs: string[] = []): Promise<BareServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join('bench', 'lib', 'bare-fastify.ts'), String(port)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const forgetChild = onExit(() => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the bare Fastify server exited with code ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
  });
  child.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      forgetChild();
    },
  };
}

/** The scenario's request sent to another path: same method, headers and bodies. */
function sentTo(spec: RequestSpec, path: string): RequestSpec {
  const next = spec.next;
  return { ...spec, path, ...(next ? { next: () => ({ ...next(), path }) } : {}) };
}

/**
 * The scenario's request sent to the bare route, so the baseline parses the same JSON the
 * scenario sends (GET scenarios compare with a bare GET).
 */
export function bareRequest(spec: RequestSpec): RequestSpec {
  return sentTo(spec, '/bare');
}

/**
 * The scenario's request sent to Verdict's no-op route (public: no key checked, no CORS): what
 * the global stack costs for this method and body, before the route does any work.
 */
export function noopRequest(spec: RequestSpec): RequestSpec {
  return sentTo(spec, NOOP.path);
}

export interface LoadOptions {
  connections: number;
  durationSeconds: number;
  /** The server process whose CPU time (children included) is read before and after. */
  serverPid?: number;
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process and its descendants, in seconds; null without /proc. */
export function processTreeCpuSeconds(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ")": utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) seconds += processTreeCpuSeconds(Number(child)) ?? 0;
    }
    return seconds;
  } catch {
    return null;
  }
}

function bodyRequests(spec: RequestSpec, bodies: string[]): autocannon.Request[] {
  return bodies.map((body) => ({ method: spec.method ?? 'GET', path: spec.path, headers: spec.headers, body }));
}

/**
 * Gives each connection its own share of the bodies. autocannon builds every request of its list
 * for every connection before that connection's first request goes out: the whole pool for each
 * of 64 connections stalled the load generator for seconds, and the first responses' latencies
 * (and the mean and p99) counted the stall.
 */
function bodiesPerConnection(spec: RequestSpec, bodies: string[], connections: number): (client: autocannon.Client) => void {
  let next = 0;
  return (client) => {
    const index = next++ % connections;
    const share = bodies.filter((_, n) => n % connections === index);
    client.setRequests(bodyRequests(spec, share.length > 0 ? share : bodies));
  };
}

export async function load(url: string, spec: RequestSpec, options: LoadOptions): Promise<LoadResult> {
  const samples = new Samples();
  const settings: autocannon.Options = {
    url,
    connections: options.connections,
    duration: options.durationSeconds,
    method: spec.method ?? 'GET',
    headers: spec.headers,
    requests: spec.bodies
      ? bodyRequests(spec, spec.bodies.slice(0, 1))
      : [
          {
            method: spec.method ?? 'GET',
            path: spec.path,
            headers: spec.headers,
            body: spec.body,
            ...(spec.next ? { setupRequest: (request: autocannon.Request) => ({ ...request, ...spec.next?.() }) } : {}),
          },
        ],
  };
  if (spec.bodies) settings.setupClient = bodiesPerConnection(spec, spec.bodies, options.connections);
  const cpuBefore = options.serverPid === undefined ? null : processTreeCpuSeconds(options.serverPid);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(settings, (error, finished) => (error ? reject(error as Error) : resolve(finished)));
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) samples.add(responseTimeMs);
    });
  });
  const cpuAfter = options.serverPid === undefined ? null : processTreeCpuSeconds(options.serverPid);
  const [p50 = 0, p99 = 0] = samples.percentiles(50, 99);
  const completed = result.requests.total;
  return {
    cpuMicrosPerRequest: cpuBefore !== null && cpuAfter !== null && completed > 0 ? ((cpuAfter - cpuBefore) * 1e6) / completed : null,
    requestsPerSecond: result.requests.average,
    p50,
    p99,
    meanMs: samples.mean(),
    cycleMs: result.requests.average > 0 ? (options.connections / result.requests.average) * 1000 : 0,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

export const NOOP: RequestSpec = { path: '/_bench/noop' };

/** What a row is compared with: the bare Fastify route and, where measured, Verdict's no-op route. */
export interface Baselines {
  bare?: LoadResult;
  noop?: LoadResult;
}

function ratios(result: LoadResult, baselines: Baselines): string {
  const parts: string[] = [];
  if (baselines.bare) {
    parts.push(`${(result.requestsPerSecond / baselines.bare.requestsPerSecond).toFixed(2)}x bare (p99 ${(result.p99 / baselines.bare.p99).toFixed(2)}x)`);
  }
  if (baselines.noop) parts.push(`${(result.requestsPerSecond / baselines.noop.requestsPerSecond).toFixed(2)}x no-op`);
  const cpu = result.cpuMicrosPerRequest;
  const bareCpu = baselines.bare?.cpuMicrosPerRequest;
  if (cpu !== null && bareCpu) parts.push(`CPU/req ${(cpu / bareCpu).toFixed(2)}x bare`);
  return parts.length > 0 ? `  ratio ${parts.join(', ')}` : '';
}

export function formatRow(name: string, result: LoadResult, baselines: Baselines, itemsPerRequest = 1): string {
  const items = itemsPerRequest > 1 ? `  items/s ${Math.round(result.requestsPerSecond * itemsPerRequest)}` : '';
  return (
    `${name.padEnd(28)} req/s ${result.requestsPerSecond.toFixed(0).padStart(7)}  p50 ${result.p50.toFixed(2).padStart(7)} ms  ` +
    `p99 ${result.p99.toFixed(2).padStart(7)} ms  mean ${result.meanMs.toFixed(2).padStart(7)} ms  cycle ${result.cycleMs.toFixed(2).padStart(7)} ms` +
    `${result.cpuMicrosPerRequest === null ? '' : `  cpu ${result.cpuMicrosPerRequest.toFixed(1).padStart(6)} µs/req`}${ratios(result, baselines)}${items}` +
    (result.errors + result.non2xx > 0 ? `  (errors ${result.errors}, non-2xx ${result.non2xx})` : '')
  );
}

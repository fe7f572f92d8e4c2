// Scaled-mode capacity: the same scenarios against one and against two `verdict serve
// --no-workers` processes (plus one `verdict worker`) sharing PostgreSQL and Redis. Each
// configuration gets a scratch database on the server VERDICT_DATABASE_URL names, dropped after. Load comes
// from this process, split evenly across the API processes; each configuration is compared with
// the no-op route measured on the same processes in the same run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { assignHit, assignMiss } from './scenarios/assignment.js';
import { trackSingleEvent } from './scenarios/events.js';
import { scratchPostgres } from './lib/scratch-postgres.js';
import { formatRow, freePort, load, NOOP, type BenchServer, type LoadOptions, type LoadResult, type RequestSpec, type Scenario } from './lib/harness.js';

const root = path.resolve(import.meta.dirname, '..');
const scenarios: Scenario[] = [assignHit, assignMiss, trackSingleEvent];

interface Cluster {
  urls: string[];
  server: BenchServer;
  stop(): Promise<void>;
}

async function healthy(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/v1/healthz`)).ok) return;
    } catch {
      // starting
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not start`);
}

async function startCluster(apiProcesses: number): Promise<Cluster> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-scaled-bench-'));
  const database = await scratchPostgres(process.env.VERDICT_DATABASE_URL as string, 'scaled');
  const env = {
    ...process.env,
    VERDICT_DATABASE_URL: database.url,
    VERDICT_DATA_DIR: dataDir,
    VERDICT_LOG_LEVEL: 'warn',
    VERDICT_BENCH_ROUTES: '1',
    VERDICT_REDIS_PREFIX: `verdict-bench-${crypto.randomUUID().slice(0, 8)}:`,
    VERDICT_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
    HOST: '127.0.0.1',
  } as Record<string, string>;
  const created = spawnSync(process.execPath, ['bin/verdict.js', 'workspaces', 'create', '--name', 'Bench', '--json'], { cwd: root, env, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(created.stderr);
  const bootstrap = JSON.parse(created.stdout);
  const children: ChildProcess[] = [spawn(process.execPath, ['bin/verdict.js', 'worker'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] })];
  const urls: string[] = [];
  for (let i = 0; i < apiProcesses; i++) {
    const port = await freePort();
    children.push(
      spawn(process.execPath, ['bin/verdict.js', 'serve', '--no-workers', '--port', String(port)], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] }),
    );
    urls.push(`http://127.0.0.1:${port}`);
  }
  await Promise.all(urls.map(healthy));
  const stop = async () => {
    await Promise.all(children.map((child) => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')))));
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    urls,
    server: { url: urls[0] as string, pid: children[0]?.pid as number, key: bootstrap.api_key.key, workspaceId: bootstrap.workspace.id, env, stop },
    stop,
  };
}

/** Loads every API process at once with its share of the connections and adds up the throughput. */
async function loadAll(urls: string[], spec: RequestSpec, options: LoadOptions): Promise<LoadResult> {
  const share = { ...options, connections: Math.max(1, Math.round(options.connections / urls.length)) };
  const results = await Promise.all(urls.map((url) => load(url, spec, share)));
  const requestsPerSecond = results.reduce((sum, r) => sum + r.requestsPerSecond, 0);
  return {
    requestsPerSecond,
    meanMs: results.reduce((sum, r) => sum + r.meanMs * r.requestsPerSecond, 0) / Math.max(requestsPerSecond, 1),
    cycleMs: requestsPerSecond > 0 ? ((share.connections * urls.length) / requestsPerSecond) * 1000 : 0,
    p50: Math.max(...results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    // Several processes answer: per-request CPU is not read here (bench/run.ts reports it).
    cpuMicrosPerRequest: null,
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

async function main(options: { connections: string; duration: string }): Promise<void> {
  if (!process.env.VERDICT_DATABASE_URL?.startsWith('postgres') || !process.env.VERDICT_REDIS_URL) {
    throw new Error('scaled benchmarks need VERDICT_DATABASE_URL (PostgreSQL) and VERDICT_REDIS_URL');
  }
  const loadOptions = { connections: Number(options.connections), durationSeconds: Number(options.duration) };
  console.log(
    `Scaled mode on PostgreSQL + Redis: ${loadOptions.connections} connections in all, ${loadOptions.durationSeconds}s per measurement; one worker process.`,
  );
  for (const processes of [1, 2]) {
    const cluster = await startCluster(processes);
    try {
      console.log(`\n== ${processes} API process${processes > 1 ? 'es' : ''} ==`);
      await loadAll(cluster.urls, NOOP, { ...loadOptions, durationSeconds: 2 });
      const baseline = await loadAll(cluster.urls, NOOP, loadOptions);
      console.log(formatRow('no-op baseline', baseline, {}));
      for (const scenario of scenarios) {
        const spec = await scenario.prepare(cluster.server);
        console.log(formatRow(scenario.name, await loadAll(cluster.urls, spec, loadOptions), { noop: baseline }));
      }
    } finally {
      await cluster.stop();
    }
  }
}

await new Command()
  .name('bench:scaled')
  .description('Assign and event throughput on one and on two API processes against PostgreSQL and Redis.')
  .option('-c, --connections <n>', 'connections in all, split across the processes', '64')
  .option('-d, --duration <seconds>', 'seconds per measurement', '10')
  .action(main)
  .parseAsync(process.argv);

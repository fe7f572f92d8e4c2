import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeEach, type Variant } from '../support/describe-each.js';
import {
  alive,
  createSite,
  exitWithin,
  linesWith,
  prepareWorkload,
  runWorkload,
  startServe,
  startVerdict,
  stopLines,
  type Site,
  killLeftovers,
} from './stopping.js';
import { eventually } from './processes.js';

// Issue 39, item 3: `verdict worker` and `serve --processes N` (the primary and each HTTP
// process) stop within the deadline under load and after it, with the log's reader stalled then
// gone, or reading.

// Generous: two SQLite processes closing at once take turns at the write lock, on a loaded machine for seconds.
const TIMEOUT_MS = 15_000;
/** The deadline, the log's bounded exit flush (2 s), the primary's margin (1 s) and room for a loaded machine. */
const STOP_BOUND_MS = TIMEOUT_MS + 2_000 + 1_000 + 3_000;
const UNITS = 200;
const env = { VERDICT_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) };

/** The HTTP processes a primary runs (its children serving). */
function servingChildren(primaryPid: number): number[] {
  const listing = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(primaryPid)], { encoding: 'utf8' }).stdout;
  return listing
    .split('\n')
    .filter((line) => line.includes('verdict.js serve'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

function suite(variant: Variant) {
  let site: Site;
  beforeAll(async () => {
    site = await createSite(variant);
  });
  afterEach(() => killLeftovers());
  afterAll(async () => {
    await site?.drop();
  });

  it('verdict worker: a SIGTERM under load ends it, its log reader stalled and then gone', async () => {
    const serve = await startServe(site, ['--no-workers']);
    const worker = startVerdict(['worker'], { ...site.env, ...env });
    try {
      await eventually(async () => linesWith(worker.log(), 'worker started').length === 1, 60_000);
      const workload = await prepareWorkload(serve.url, site.key, UNITS);
      worker.setReader('stalled');
      const load = runWorkload(serve.url, site.key, workload, 1).catch(() => 0);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      worker.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      worker.setReader('gone');
      expect(await exitWithin(worker, STOP_BOUND_MS)).toBe(0);
      await load;
    } finally {
      serve.child.kill('SIGTERM');
      await exitWithin(serve, STOP_BOUND_MS);
    }
  }, 120_000);

  it('verdict worker: a SIGTERM after load stops it cleanly with its log read', async () => {
    const serve = await startServe(site, ['--no-workers']);
    const worker = startVerdict(['worker'], { ...site.env, ...env });
    try {
      await eventually(async () => linesWith(worker.log(), 'worker started').length === 1, 60_000);
      const workload = await prepareWorkload(serve.url, site.key, UNITS);
      expect(await runWorkload(serve.url, site.key, workload, 1)).toBeGreaterThan(0);
      worker.child.kill('SIGTERM');
      expect(await exitWithin(worker, STOP_BOUND_MS), stopLines(worker.log())).toBe(0);
      expect(linesWith(worker.log(), 'shutting down')).toEqual([expect.objectContaining({ signal: 'SIGTERM', timeout_ms: TIMEOUT_MS })]);
      expect(linesWith(worker.log(), 'stopped')).toHaveLength(1);
    } finally {
      serve.child.kill('SIGTERM');
      await exitWithin(serve, STOP_BOUND_MS);
    }
  }, 120_000);

  it('serve --processes 2: a SIGTERM under load ends the primary and each process, the log reader stalled and then gone', async () => {
    const primary = await startServe(site, ['--processes', '2'], env);
    const pid = primary.child.pid as number;
    await eventually(async () => servingChildren(pid).length === 2, 60_000);
    const children = servingChildren(pid);
    const workload = await prepareWorkload(primary.url, site.key, UNITS);
    primary.setReader('stalled');
    const load = runWorkload(primary.url, site.key, workload, 1).catch(() => 0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    primary.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    primary.setReader('gone');
    const code = await exitWithin(primary, STOP_BOUND_MS);
    const left = children.filter(alive);
    for (const child of left) process.kill(child, 'SIGKILL');
    expect(code, stopLines(primary.log())).toBe(0);
    expect(left).toEqual([]);
    await load;
  }, 120_000);

  it('serve --processes 2: a SIGTERM after load stops the primary and each process cleanly with the log read', async () => {
    const primary = await startServe(site, ['--processes', '2'], env);
    const pid = primary.child.pid as number;
    await eventually(async () => servingChildren(pid).length === 2, 60_000);
    const children = servingChildren(pid);
    const workload = await prepareWorkload(primary.url, site.key, UNITS);
    expect(await runWorkload(primary.url, site.key, workload, 1)).toBeGreaterThan(0);
    primary.child.kill('SIGTERM');
    const code = await exitWithin(primary, STOP_BOUND_MS);
    const left = children.filter(alive);
    for (const child of left) process.kill(child, 'SIGKILL');
    expect(code, stopLines(primary.log())).toBe(0);
    expect(left).toEqual([]);
    expect(linesWith(primary.log(), 'shutting down the HTTP processes')).toEqual([expect.objectContaining({ signal: 'SIGTERM', processes: 2 })]);
    // Each process got the primary's SIGTERM (once or, with the process group's, twice) and stopped once.
    expect(linesWith(primary.log(), 'shutting down')).toHaveLength(2);
    expect(linesWith(primary.log(), 'stopped')).toHaveLength(2);
  }, 120_000);
}

describeEach('stopping verdict worker and serve --processes 2', { dialects: ['sqlite'] }, suite);
describeEach('stopping verdict worker and serve --processes 2', { dialects: ['postgres'], buffers: ['redis'] }, suite);

import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEach, type Variant } from '../support/describe-each.js';
import {
  alive,
  exitWithin,
  linesWith,
  prepareWorkload,
  runWorkload,
  startServe,
  startWorkload,
  startVerdict,
  stopLines,
  underLoad,
  useSite,
  useSuiteServe,
  type Site,
  type Verdict,
  type Workload,
} from './stopping.js';
import { eventually } from '../support/processes.js';

// Issue 39, item 3: `verdict worker` and `serve --processes N` (the primary and each HTTP
// process) stop within the deadline under load and after it, with the log's reader stalled then
// gone, or reading.

// Generous: two SQLite processes closing at once take turns at the write lock, on a loaded machine for seconds.
const TIMEOUT_MS = 15_000;
/** The deadline, the log's bounded exit flush (2 s), the primary's margin (1 s) and room for a loaded machine. */
const STOP_BOUND_MS = TIMEOUT_MS + 2_000 + 1_000 + 3_000;
const UNITS = 200;
/** Seconds of load on each of the workload's three routes (assign, events, workspace): hundreds of access lines each. */
const LOAD_SECONDS = 0.5;
const env = { VERDICT_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS) };

/** The HTTP processes a primary runs (its children serving). */
function servingChildren(primaryPid: number): number[] {
  const listing = spawnSync('ps', ['-o', 'pid=,args=', '--ppid', String(primaryPid)], { encoding: 'utf8' }).stdout;
  return listing
    .split('\n')
    .filter((line) => line.includes('verdict.js serve'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** A `verdict worker` on the site, once it has started. */
async function startWorker(site: Site): Promise<Verdict> {
  const worker = startVerdict(['worker'], { ...site.env, ...env });
  await eventually(async () => linesWith(worker.log(), 'worker started').length === 1, 60_000);
  return worker;
}

/** `serve --processes 2` on the site, once both HTTP processes run, with the workload prepared. */
async function startCluster(site: Site) {
  const primary = await startServe(site, ['--processes', '2'], env);
  const pid = primary.child.pid as number;
  await eventually(async () => servingChildren(pid).length === 2, 60_000);
  const children = servingChildren(pid);
  const workload = await prepareWorkload(primary.url, site.key, UNITS);
  return { primary, children, workload };
}

/** Waits for the primary's exit; its code, and the HTTP processes still alive then (killed, so none is left behind). */
async function clusterExit(primary: Verdict, children: number[]): Promise<{ code: number | null | 'still running'; left: number[] }> {
  const code = await exitWithin(primary, STOP_BOUND_MS);
  const left = children.filter(alive);
  for (const child of left) process.kill(child, 'SIGKILL');
  return { code, left };
}

function suite(variant: Variant) {
  const site = useSite(variant);

  describe('verdict worker', () => {
    // The API the load goes to: not under test here, so one serves both tests.
    const api = useSuiteServe(site, ['--no-workers']);
    let workload: Workload;
    beforeAll(async () => {
      workload = await prepareWorkload(api().url, site().key, UNITS);
    });

    it('a SIGTERM under load ends it, its log reader stalled and then gone', async () => {
      const worker = await startWorker(site());
      worker.setReader('stalled');
      const load = startWorkload(api().url, site().key, workload, 5);
      await underLoad(load);
      worker.child.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      worker.setReader('gone');
      expect(await exitWithin(worker, STOP_BOUND_MS)).toBe(0);
      load.stop();
      await load.done.catch(() => 0);
    }, 120_000);

    it('a SIGTERM after load stops it cleanly with its log read', async () => {
      const worker = await startWorker(site());
      expect(await runWorkload(api().url, site().key, workload, LOAD_SECONDS)).toBeGreaterThan(0);
      worker.child.kill('SIGTERM');
      expect(await exitWithin(worker, STOP_BOUND_MS), stopLines(worker.log())).toBe(0);
      expect(linesWith(worker.log(), 'shutting down')).toEqual([expect.objectContaining({ signal: 'SIGTERM', timeout_ms: TIMEOUT_MS })]);
      expect(linesWith(worker.log(), 'stopped')).toHaveLength(1);
    }, 120_000);
  });

  it('serve --processes 2: a SIGTERM under load ends the primary and each process, the log reader stalled and then gone', async () => {
    const { primary, children, workload } = await startCluster(site());
    primary.setReader('stalled');
    const load = startWorkload(primary.url, site().key, workload, 5);
    await underLoad(load);
    primary.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    primary.setReader('gone');
    const { code, left } = await clusterExit(primary, children);
    expect(code, stopLines(primary.log())).toBe(0);
    expect(left).toEqual([]);
    load.stop();
    await load.done.catch(() => 0);
  }, 120_000);

  it('serve --processes 2: a SIGTERM after load stops the primary and each process cleanly with the log read', async () => {
    const { primary, children, workload } = await startCluster(site());
    expect(await runWorkload(primary.url, site().key, workload, LOAD_SECONDS)).toBeGreaterThan(0);
    primary.child.kill('SIGTERM');
    const { code, left } = await clusterExit(primary, children);
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

/** What a timing child process of bench:analysis measures: wall and CPU seconds of each snapshot and the process's peak RSS. */
import { performance } from 'node:perf_hooks';
import type { AppContext } from '../../src/context.js';
import { computeById } from '../../src/features/analysis/service.js';
import type { ComputationMode } from '../../src/features/analysis/store/contract.js';

export interface ComputeFigures {
  seconds: number[];
  /** CPU seconds of the computing process: less sensitive than wall time to a busy machine (SQLite works in-process). */
  cpu_seconds: number[];
  max_rss_mb: number;
  rss_before_mb: number;
  verdict: string;
  units: number[];
  /** Where the snapshots were computed (computation.store). */
  store: string;
}

/**
 * Computes the snapshot `runs` times on `ctx` (a context of this process alone) and closes it; in
 * `mode` when given (bench:analysis --clickhouse: full, every event read), else the store's default.
 */
export async function snapshotFigures(ctx: AppContext, experimentId: string, runs: number, mode?: ComputationMode): Promise<ComputeFigures> {
  const rssBefore = process.memoryUsage().rss;
  const seconds: number[] = [];
  const cpuSeconds: number[] = [];
  let verdict = '';
  let units: number[] = [];
  let store = '';
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const snapshot = await computeById(ctx, experimentId, { trigger: 'cli', mode });
    seconds.push((performance.now() - started) / 1000);
    const cpu = process.cpuUsage(cpuStarted);
    cpuSeconds.push((cpu.user + cpu.system) / 1e6);
    verdict = snapshot?.decision.verdict ?? 'none';
    units = snapshot?.traffic.map((t) => t.exposed_units) ?? [];
    store = snapshot?.computation?.store ?? '';
  }
  await ctx.close();
  return {
    seconds,
    cpu_seconds: cpuSeconds,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    rss_before_mb: rssBefore / 1024 / 1024,
    verdict,
    units,
    store,
  };
}

// Time and peak memory of computing one analysis snapshot over a large experiment.
// Seeds exposures and events straight into a scratch database (SQLite always; PostgreSQL too when
// VERDICT_DATABASE_URL is set: a scratch database is created on that server and dropped after),
// then computes the snapshot in a fresh child process so its peak RSS is the computation's alone.
// Run: npm run bench:analysis -- --units 10000,100000    (figures: docs/analysis.md)
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import type { AppContext } from '../src/context.js';
import { computeById } from '../src/features/analysis/service.js';
import { createWorkspace } from '../src/features/workspaces/service.js';
import { newId } from '../src/lib/ids.js';
import { benchMetric, DAY, EVENTS_PER_UNIT, insertRunningExperiment, openBenchContext, openBenchContextAt, standardMetrics } from './lib/analysis-seed.js';
import { analyzeTables, runJsonChild, scratchDatabase, seedEvents, seedUnits } from './lib/bench-facts.js';

const T0 = Date.UTC(2031, 0, 1);

/** Workspace, four metrics (binary, revenue sum, duration mean, count) and a running experiment. */
async function seedDefinitions(ctx: AppContext): Promise<{ workspaceId: string; experimentId: string; extraGuardrails: string[] }> {
  const { workspace, environment } = await createWorkspace(ctx, `Bench ${newId()}`);
  const metrics = standardMetrics(workspace.id, T0);
  // Added as guardrails for the second measurement: revenue capped at its 99th percentile (the
  // usual use of capping: a few very large orders) and a ratio, revenue per pageview.
  const capped = {
    ...benchMetric(workspace.id, T0, 'revenue_p99', 'purchase', 'revenue', 'sum', 'order.total', 7 * DAY),
    capping: JSON.stringify({ type: 'percentile', value: 0.99 }),
  };
  const ratio = {
    ...benchMetric(workspace.id, T0, 'revenue_per_pageview', '', 'ratio', 'sum', null, 7 * DAY),
    numerator_metric_id: metrics[1]?.id ?? null,
    denominator_metric_id: metrics[3]?.id ?? null,
  };
  await ctx.db
    .insertInto('metrics')
    .values([...metrics, capped, ratio])
    .execute();
  const [primary, ...guardrails] = metrics.map((m) => m.id);
  const experimentId = await insertRunningExperiment(ctx, { workspaceId: workspace.id, environmentId: environment.id, at: T0, primary, guardrails });
  return { workspaceId: workspace.id, experimentId, extraGuardrails: [...guardrails, capped.id, ratio.id] };
}

/** Each unit's five events (bench/lib/bench-facts.ts); 1 in 97 purchases arrives 8 days late. */
async function seedFacts(ctx: AppContext, ids: { workspaceId: string; experimentId: string }, units: number): Promise<void> {
  const scope = { ...ids, t0: T0 };
  await seedUnits(ctx, scope, 0, units);
  await seedEvents(ctx, scope, { from: 0, to: units * EVENTS_PER_UNIT, firstUnit: 0, units, shift: 0, late: 'some purchases', prefix: 'e' });
  await analyzeTables(ctx);
}

interface ComputeFigures {
  seconds: number[];
  /** CPU seconds of the computing process: less sensitive than wall time to a busy machine (SQLite works in-process). */
  cpu_seconds: number[];
  max_rss_mb: number;
  rss_before_mb: number;
  verdict: string;
  units: number[];
}

/** Child-process mode: compute the snapshot `runs` times and print the figures as JSON. */
async function computeMode(databaseUrl: string, experimentId: string, runs: number): Promise<void> {
  const ctx = await openBenchContextAt(databaseUrl, T0 + 20 * DAY);
  const rssBefore = process.memoryUsage().rss;
  const seconds: number[] = [];
  const cpuSeconds: number[] = [];
  let verdict = '';
  let units: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const snapshot = await computeById(ctx, experimentId, { trigger: 'cli' });
    seconds.push((performance.now() - started) / 1000);
    const cpu = process.cpuUsage(cpuStarted);
    cpuSeconds.push((cpu.user + cpu.system) / 1e6);
    verdict = snapshot?.decision.verdict ?? 'none';
    units = snapshot?.traffic.map((t) => t.exposed_units) ?? [];
  }
  await ctx.close();
  const figures: ComputeFigures = {
    seconds,
    cpu_seconds: cpuSeconds,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    rss_before_mb: rssBefore / 1024 / 1024,
    verdict,
    units,
  };
  process.stdout.write(JSON.stringify(figures) + '\n');
}

/**
 * Child-process mode for the comparison: alternates the guardrail lists (without, then with the
 * capped and ratio metrics) snapshot by snapshot, so a busy machine slows both alike; prints the
 * wall seconds of each as JSON.
 */
async function pairedMode(databaseUrl: string, experimentId: string, runs: number, lists: string[]): Promise<void> {
  const ctx = await openBenchContextAt(databaseUrl, T0 + 20 * DAY);
  const seconds: number[][] = lists.map(() => []);
  for (let run = 0; run < runs; run += 1) {
    for (const [index, list] of lists.entries()) {
      await ctx.db.updateTable('experiments').set({ guardrail_metric_ids: list }).where('id', '=', experimentId).execute();
      const started = performance.now();
      await computeById(ctx, experimentId, { trigger: 'cli' });
      seconds[index]?.push((performance.now() - started) / 1000);
    }
  }
  await ctx.close();
  process.stdout.write(JSON.stringify(seconds) + '\n');
}

function runPairedChild(databaseUrl: string, experimentId: string, runs: number, lists: string[]): number[][] {
  return runJsonChild<number[][]>(fileURLToPath(import.meta.url), ['paired', databaseUrl, experimentId, String(runs), ...lists]);
}

function runComputeChild(databaseUrl: string, experimentId: string, runs: number): ComputeFigures {
  return runJsonChild<ComputeFigures>(fileURLToPath(import.meta.url), ['compute', databaseUrl, experimentId, String(runs)]);
}

async function benchOne(kind: 'sqlite' | 'postgres', units: number, runs: number, keep: boolean): Promise<void> {
  const scratch = await scratchDatabase(kind, process.env.VERDICT_DATABASE_URL, 'analysis');
  try {
    const ctx = await openBenchContext(scratch.config, scratch.dataDir, true, T0 + 20 * DAY);
    const seedStarted = performance.now();
    const ids = await seedDefinitions(ctx);
    await seedFacts(ctx, ids, units);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const figures = runComputeChild(scratch.url, ids.experimentId, runs);
    const times = figures.seconds.map((s, run) => `${s.toFixed(2)} s (cpu ${figures.cpu_seconds[run]?.toFixed(2)})`).join(', ');
    const baseList = JSON.stringify(ids.extraGuardrails.slice(0, -2));
    await ctx.db
      .updateTable('experiments')
      .set({ guardrail_metric_ids: JSON.stringify(ids.extraGuardrails) })
      .where('id', '=', ids.experimentId)
      .execute();
    await ctx.close();
    const extra = runComputeChild(scratch.url, ids.experimentId, runs);
    const extraTimes = extra.seconds.map((s, run) => `${s.toFixed(2)} s (cpu ${extra.cpu_seconds[run]?.toFixed(2)})`).join(', ');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    // The first pair warms the caches; the figure is the median of the other pairs' ratios.
    const [pairedBase = [], pairedExtra = []] = runPairedChild(scratch.url, ids.experimentId, runs + 1, [baseList, JSON.stringify(ids.extraGuardrails)]);
    const pairs = pairedBase.map((s, run) => `${s.toFixed(2)}/${pairedExtra[run]?.toFixed(2)} s`).join(', ');
    console.log(
      `${scratch.label.padEnd(8)} units ${units.toLocaleString('en-US').padStart(9)}  events ${(units * EVENTS_PER_UNIT).toLocaleString('en-US').padStart(10)}  ` +
        `seed ${seedSeconds.toFixed(1).padStart(6)} s  snapshot ${times}  peak RSS ${figures.max_rss_mb.toFixed(0)} MB ` +
        `(${figures.rss_before_mb.toFixed(0)} MB before)  units ${figures.units.join('/')}  ${figures.verdict}`,
    );
    console.log(`${''.padEnd(8)} + p99-capped and ratio guardrails: snapshot ${extraTimes}  peak RSS ${extra.max_rss_mb.toFixed(0)} MB`);
    console.log(
      `${''.padEnd(8)} alternating without/with them in one process: ${pairs}; ` +
        `median ratio ${median(pairedBase.slice(1).map((s, run) => (pairedExtra[run + 1] ?? Number.NaN) / s)).toFixed(2)}x the time without them (first pair cold, left out)`,
    );
  } finally {
    if (keep) console.log(`kept ${scratch.url} (drop it when done)`);
    else await scratch.drop();
  }
}

const program = new Command().name('bench:analysis').description('Seconds and peak memory of one analysis snapshot over N units with 5 events each.');
program
  .option('-u, --units <list>', 'comma-separated unit counts', '10000,100000')
  .option('-r, --runs <n>', 'snapshots computed per size (the first one is cold)', '3')
  .option('--sqlite-only', 'skip PostgreSQL even when VERDICT_DATABASE_URL is set')
  .option('--keep', 'keep the scratch databases (to EXPLAIN the queries afterwards)')
  .action(async (options: { units: string; runs: string; sqliteOnly?: boolean; keep?: boolean }) => {
    const kinds: Array<'sqlite' | 'postgres'> = process.env.VERDICT_DATABASE_URL && !options.sqliteOnly ? ['sqlite', 'postgres'] : ['sqlite'];
    console.log(
      `Analysis snapshot: 4 metrics (binary, revenue sum, duration mean, count), then the same with a p99-capped revenue and a ratio (revenue per pageview) added as guardrails; 2 variants, ${EVENTS_PER_UNIT} events per unit; ${os.cpus().length} CPUs.\n`,
    );
    for (const units of options.units.split(',').map(Number)) {
      for (const kind of kinds) await benchOne(kind, units, Number(options.runs), options.keep === true);
    }
  });
program
  .command('paired <database> <experiment> <runs> <lists...>', { hidden: true })
  .action(async (database: string, experiment: string, runs: string, lists: string[]) => pairedMode(database, experiment, Number(runs), lists));
program
  .command('compute <database> <experiment> <runs>', { hidden: true })
  .action(async (database: string, experiment: string, runs: string) => computeMode(database, experiment, Number(runs)));

await program.parseAsync(process.argv);

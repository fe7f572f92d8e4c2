// Time and peak memory of computing one analysis snapshot over a large experiment.
// Seeds exposures and events straight into a scratch database (SQLite always; PostgreSQL too when
// VERDICT_DATABASE_URL is set: a scratch database is created on that server and dropped after),
// then computes the snapshot in a fresh child process so its peak RSS is the computation's alone.
// Run: npm run bench:analysis -- --units 10000,100000    (figures: docs/analysis.md)
// With --clickhouse: the same snapshot in the embedded ClickHouse engine beside them (lib/clickhouse-comparison.ts).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { computeById } from '../src/features/analysis/service.js';
import { CHDB_VERSION, chdbInstalled } from '../src/clickhouse/client.js';
import { ANALYSIS_T0, DAY, EVENTS_PER_UNIT, openBenchContext, openBenchContextAt, seedAnalysisDefinitions } from './lib/analysis-seed.js';
import { runJsonChild, scratchDatabase, seedAnalysisFacts } from './lib/bench-facts.js';
import { compareWithClickHouse, type Store } from './lib/clickhouse-comparison.js';
import { snapshotFigures, type ComputeFigures } from './lib/snapshot-figures.js';

const T0 = ANALYSIS_T0;

interface Options {
  units: string;
  runs: string;
  sqliteOnly?: boolean;
  keep?: boolean;
  clickhouse?: boolean;
  sqlUpTo: string;
  drainEvents: string;
  stores: string;
  refresh?: boolean;
}

async function clickhouseMode(options: Options): Promise<void> {
  if (!(await chdbInstalled())) throw new Error(`--clickhouse needs the embedded ClickHouse engine: npm install --no-save chdb@${CHDB_VERSION}`);
  const units = program.getOptionValueSource('units') === 'default' ? '1000000,4000000,20000000' : options.units;
  if (options.sqliteOnly) delete process.env.VERDICT_DATABASE_URL;
  await compareWithClickHouse({
    units: units.split(',').map(Number),
    runs: Number(options.runs),
    sqlUpTo: Number(options.sqlUpTo),
    drainEvents: Number(options.drainEvents),
    stores: options.stores.split(',') as Store[],
    refresh: options.refresh !== false,
  });
}

/** Child-process mode: compute the snapshot `runs` times and print the figures as JSON. */
async function computeMode(databaseUrl: string, experimentId: string, runs: number): Promise<void> {
  const figures = await snapshotFigures(await openBenchContextAt(databaseUrl, T0 + 20 * DAY), experimentId, runs);
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
    const ids = await seedAnalysisDefinitions(ctx, T0);
    await seedAnalysisFacts(ctx, { ...ids, t0: T0 }, units);
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
  .option('-u, --units <list>', 'comma-separated unit counts (with --clickhouse: 1000000,4000000,20000000, i.e. 5M, 20M and 100M events)', '10000,100000')
  .option('-r, --runs <n>', 'snapshots computed per size (the first one is cold)', '3')
  .option('--sqlite-only', 'skip PostgreSQL even when VERDICT_DATABASE_URL is set')
  .option('--keep', 'keep the scratch databases (to EXPLAIN the queries afterwards)')
  .option('--clickhouse', 'the full snapshot in the embedded ClickHouse engine beside SQLite and PostgreSQL, and the drain into each')
  .option('--sql-up-to <events>', 'with --clickhouse: seed SQLite and PostgreSQL up to this many events', '20000000')
  .option('--stores <list>', 'with --clickhouse: the stores measured', 'sqlite,postgres,clickhouse')
  .option('--drain-events <n>', 'with --clickhouse: events drained into each store for the drain rate (0: none)', '200000')
  .option('--no-refresh', 'with --clickhouse: skip the incremental refresh after +1% events')
  .action(async (options: Options) => {
    if (options.clickhouse) return clickhouseMode(options);
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

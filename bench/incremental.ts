// Incremental analysis against the full computation (docs/analysis.md "Incremental analysis").
// Seeds an experiment (4 metrics, 2 variants, 5 events per unit) into a scratch database (SQLite
// always; PostgreSQL too when VERDICT_DATABASE_URL is set), then, each step in a fresh child
// process so its peak RSS is its own:
//   1. the full computation (raw events);
//   2. the first incremental computation (builds the rollups);
//   3. +1% events: new events of exposed units, late ones (8 days old) and new units with theirs;
//   4. the incremental refresh (the figure of interest) and the full computation of the same data.
// Prints both times, their ratio against its target (TARGETS; a missed one is named, and the
// exit code is 1), events_read and peak RSS. With --private-postgres, PostgreSQL is a
// server of the benchmark's own, and each computation also gets the server's CPU time (the work of
// a PostgreSQL computation is in the server), a steadier figure than wall time on a loaded machine.
// Run: npm run bench:incremental -- --units 1000000
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { sql } from 'kysely';
import type { AppContext } from '../src/context.js';
import { nothingToWrite } from '../src/db/write-tasks.js';
import { computeById } from '../src/features/analysis/service.js';
import { createWorkspace } from '../src/features/workspaces/service.js';
import { newId } from '../src/lib/ids.js';
import { DAY, EVENTS_PER_UNIT, insertRunningExperiment, openBenchContext, openBenchContextAt, standardMetrics } from './lib/analysis-seed.js';
import { analyzeTables, runJsonChild, scratchDatabase, seedEvents, seedUnits } from './lib/bench-facts.js';
import { serverCpuSeconds } from './lib/server-cpu.js';
import { startPrivatePostgres, type PrivatePostgres } from '../test/scaled/private-postgres.js';

const T0 = Date.UTC(2031, 0, 1);
const NOW = T0 + 20 * DAY;

interface Ids {
  workspaceId: string;
  experimentId: string;
}

async function seedDefinitions(ctx: AppContext): Promise<Ids> {
  const { workspace, environment } = await createWorkspace(ctx, `Bench ${newId()}`);
  const metrics = standardMetrics(workspace.id, T0);
  await ctx.db.insertInto('metrics').values(metrics).execute();
  const [primary, ...guardrails] = metrics.map((m) => m.id);
  const experimentId = await insertRunningExperiment(ctx, { workspaceId: workspace.id, environmentId: environment.id, at: T0, primary, guardrails });
  return { workspaceId: workspace.id, experimentId };
}

/**
 * +1% of the events: 60% new events of existing units (a day later), 20% late ones of existing
 * units, 20% the five events each of new units (exposed like the others).
 */
async function seedIncrement(ctx: AppContext, ids: Ids, units: number): Promise<number> {
  const added = Math.round(units * EVENTS_PER_UNIT * 0.01);
  const fresh = Math.round(added * 0.6);
  const late = Math.round(added * 0.2);
  const newUnits = Math.max(1, Math.round((added - fresh - late) / EVENTS_PER_UNIT));
  const scope = { ...ids, t0: T0 };
  await seedEvents(ctx, scope, { from: 0, to: fresh, firstUnit: 0, units: Math.max(1, Math.round(fresh / 3)), shift: DAY, late: 'none', prefix: 'f' });
  await seedEvents(ctx, scope, { from: 0, to: late, firstUnit: 7, units: late, shift: 2 * 60_000, late: 'all', prefix: 'l' });
  await seedUnits(ctx, scope, units, units + newUnits);
  await seedEvents(ctx, scope, { from: 0, to: newUnits * EVENTS_PER_UNIT, firstUnit: units, units: newUnits, shift: 0, late: 'none', prefix: 'n' });
  await sql`ANALYZE`.execute(ctx.db);
  return fresh + late + newUnits * EVENTS_PER_UNIT;
}

interface Figures {
  /** The writer and statistics threads' start before the clock, wall and the process's CPU. */
  warm_seconds: number;
  warm_cpu_seconds: number;
  seconds: number;
  cpu_seconds: number;
  /** The private PostgreSQL server's CPU during the computation; null on SQLite or a server of another's. */
  server_cpu_seconds: number | null;
  max_rss_mb: number;
  events_read: number;
  units_refreshed: number;
  units: number[];
}

/** Child-process mode: one computation, its figures as JSON. */
async function computeMode(databaseUrl: string, experimentId: string, mode: 'full' | 'incremental', postmaster: number | null): Promise<void> {
  const ctx = await openBenchContextAt(databaseUrl, NOW);
  // A serving process starts its writer threads before it listens (serve's warm) and its
  // statistics thread at its first snapshot, and keeps them: their start (each thread loading its
  // modules, about half a second of CPU apiece) is the process's, not the computation's, so it is
  // timed apart. Both modes do it, so both pay the same for it.
  const warmStarted = performance.now();
  const warmCpu = process.cpuUsage();
  await Promise.all([ctx.writes.run(nothingToWrite, null), ctx.stats.run('ready', undefined)]);
  const warm = process.cpuUsage(warmCpu);
  const warmSeconds = (performance.now() - warmStarted) / 1000;
  const serverStarted = postmaster === null ? 0 : serverCpuSeconds(postmaster);
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const snapshot = await computeById(ctx, experimentId, { trigger: 'cli', mode });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuStarted);
  await ctx.close();
  // The closed connections' backends exit, and the postmaster reaps them (their CPU moves to it).
  if (postmaster !== null) await new Promise((resolve) => setTimeout(resolve, 500));
  const figures: Figures = {
    warm_seconds: warmSeconds,
    warm_cpu_seconds: (warm.user + warm.system) / 1e6,
    seconds,
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
    server_cpu_seconds: postmaster === null ? null : serverCpuSeconds(postmaster) - serverStarted,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
    events_read: snapshot?.computation?.events_read ?? -1,
    units_refreshed: snapshot?.computation?.units_refreshed ?? -1,
    units: snapshot?.traffic.map((t) => t.exposed_units) ?? [],
  };
  process.stdout.write(JSON.stringify(figures) + '\n');
}

/** The private server's postmaster, when the benchmark started one (its computations get the server's CPU). */
let privateServer: PrivatePostgres | null = null;

function runChild(databaseUrl: string, experimentId: string, mode: 'full' | 'incremental'): Figures {
  const postmaster = privateServer && databaseUrl.startsWith('postgres') ? [String(privateServer.pid())] : [];
  return runJsonChild<Figures>(fileURLToPath(import.meta.url), ['compute', databaseUrl, experimentId, mode, ...postmaster]);
}

/**
 * The refresh after +1% as a share of the full computation of the same data, at most (docs/analysis.md
 * "Incremental analysis", issue 53): the refresh's work grows with the new events and the full
 * computation's with all of them, so the share halves from 1M to 4M units.
 */
const TARGETS = new Map<number, { cpu: number; wall: number }>([
  [1_000_000, { cpu: 0.1, wall: 0.15 }],
  [4_000_000, { cpu: 0.05, wall: 0.05 }],
]);

/** Misses of the run (a line each), printed again at the end; any makes the exit code 1. */
const misses: string[] = [];

function judge(label: string, units: number, wall: number, cpu: number, agree: boolean): string[] {
  const lines: string[] = [];
  if (!agree) {
    const miss = `MISSED: ${label}: the refresh's units differ from the full computation's`;
    lines.push(`  ${miss}`);
    misses.push(miss);
  }
  const target = TARGETS.get(units);
  if (!target)
    return [
      ...lines,
      `  no target at ${units.toLocaleString('en-US')} units (targets at ${[...TARGETS.keys()].map((n) => n.toLocaleString('en-US')).join(' and ')})`,
    ];
  for (const [name, ratio, most] of [
    ['cpu', cpu, target.cpu],
    ['wall', wall, target.wall],
  ] as const) {
    const verdict = ratio <= most ? 'met' : 'MISSED';
    lines.push(`  target ${name}: ${ratio.toFixed(3)}x against at most ${most.toFixed(2)}x: ${verdict}`);
    if (ratio > most) misses.push(`MISSED: ${label}: ${name} ${ratio.toFixed(3)}x against at most ${most.toFixed(2)}x`);
  }
  return lines;
}

const cpuOf = (figures: Figures) => figures.cpu_seconds + (figures.server_cpu_seconds ?? 0);

const line = (label: string, figures: Figures) =>
  `  ${label.padEnd(34)} ${figures.seconds.toFixed(2).padStart(7)} s (cpu ${figures.cpu_seconds.toFixed(2)}${figures.server_cpu_seconds === null ? '' : `, server cpu ${figures.server_cpu_seconds.toFixed(2)}`})  events_read ${figures.events_read.toLocaleString('en-US').padStart(10)}  ` +
  `units_refreshed ${figures.units_refreshed.toLocaleString('en-US').padStart(9)}  peak RSS ${figures.max_rss_mb.toFixed(0)} MB  units ${figures.units.join('/')}  ` +
  `(threads started before the clock: ${figures.warm_seconds.toFixed(2)} s, cpu ${figures.warm_cpu_seconds.toFixed(2)})`;

async function benchOne(kind: 'sqlite' | 'postgres', baseUrl: string | undefined, units: number, keep: boolean, prepareOnly: boolean): Promise<void> {
  const scratch = await scratchDatabase(kind, baseUrl, 'incremental');
  let ids: Ids | undefined;
  try {
    const ctx = await openBenchContext(scratch.config, scratch.dataDir, true, NOW);
    ids = await seedDefinitions(ctx);
    await seedUnits(ctx, { ...ids, t0: T0 }, 0, units);
    await seedEvents(ctx, { ...ids, t0: T0 }, { from: 0, to: units * EVENTS_PER_UNIT, firstUnit: 0, units, shift: 0, late: 'none', prefix: 'e' });
    await analyzeTables(ctx);
    console.log(`${kind}: ${units.toLocaleString('en-US')} units, ${(units * EVENTS_PER_UNIT).toLocaleString('en-US')} events`);
    console.log(line('full computation', runChild(scratch.url, ids.experimentId, 'full')));
    console.log(line('first incremental (builds rollups)', runChild(scratch.url, ids.experimentId, 'incremental')));
    const added = await seedIncrement(ctx, ids, units);
    if (kind === 'postgres') await sql`VACUUM ANALYZE`.execute(ctx.db);
    await ctx.close();
    console.log(`  +${added.toLocaleString('en-US')} events (1%: new, late, and new units' events)`);
    if (prepareOnly) return;
    const refresh = runChild(scratch.url, ids.experimentId, 'incremental');
    const full = runChild(scratch.url, ids.experimentId, 'full');
    console.log(line('incremental refresh after +1%', refresh));
    console.log(line('full computation after +1%', full));
    const agree = JSON.stringify(refresh.units) === JSON.stringify(full.units);
    const wall = refresh.seconds / full.seconds;
    const cpu = cpuOf(refresh) / cpuOf(full);
    console.log(
      `  ratio refresh / full: ${wall.toFixed(3)}x wall, ${cpu.toFixed(3)}x cpu${refresh.server_cpu_seconds === null ? '' : ' (process and server)'}; units agree: ${agree}`,
    );
    console.log(judge(`${kind} at ${units.toLocaleString('en-US')} units`, units, wall, cpu, agree).join('\n') + '\n');
  } finally {
    if (keep) console.log(`kept ${scratch.url}, experiment ${ids?.experimentId} (drop it when done)`);
    else await scratch.drop();
  }
}

const program = new Command().name('bench:incremental').description('The incremental refresh after +1% events against the full computation.');
program
  .option('-u, --units <list>', 'comma-separated unit counts', '100000')
  .option('--sqlite-only', 'skip PostgreSQL even when VERDICT_DATABASE_URL is set')
  .option('--postgres-only', 'skip SQLite (needs VERDICT_DATABASE_URL or --private-postgres)')
  .option('--private-postgres', 'run PostgreSQL on a server of its own (initdb, stock settings) and time its CPU too')
  .option('--keep', 'keep the scratch databases')
  .option('--prepare-only', 'stop (keeping the database) before the refresh after +1%, to profile that refresh')
  .action(
    async (options: { units: string; sqliteOnly?: boolean; postgresOnly?: boolean; keep?: boolean; prepareOnly?: boolean; privatePostgres?: boolean }) => {
      if (options.privatePostgres && !options.sqliteOnly) privateServer = await startPrivatePostgres([]);
      const baseUrl = privateServer?.url ?? process.env.VERDICT_DATABASE_URL;
      const both: Array<'sqlite' | 'postgres'> = baseUrl && !options.sqliteOnly ? ['sqlite', 'postgres'] : ['sqlite'];
      const kinds = options.postgresOnly ? both.filter((kind) => kind === 'postgres') : both;
      console.log(
        `Incremental analysis: 4 metrics (binary, revenue sum, duration mean, count), 2 variants, ${EVENTS_PER_UNIT} events per unit; ${os.cpus().length} CPUs.\n`,
      );
      try {
        for (const units of options.units.split(',').map(Number)) {
          for (const kind of kinds) await benchOne(kind, baseUrl, units, options.keep === true || options.prepareOnly === true, options.prepareOnly === true);
        }
      } finally {
        // A kept database on the private server goes with it.
        privateServer?.destroy();
      }
      if (misses.length > 0) {
        console.log(`${misses.length} target(s) missed:\n${misses.join('\n')}`);
        process.exitCode = 1;
      } else if (!options.prepareOnly) console.log('every target with a figure here was met');
    },
  );
program
  .command('compute <database> <experiment> <mode> [postmaster]', { hidden: true })
  .action(async (database: string, experiment: string, mode: string, postmaster: string | undefined) =>
    computeMode(database, experiment, mode === 'full' ? 'full' : 'incremental', postmaster === undefined ? null : Number(postmaster)),
  );

await program.parseAsync(process.argv);

// Breakdowns (issue #18): the time of a snapshot with 2 dimensions of 50 values each and the
// source breakdown, against the same snapshot without breakdowns, over N units with 5 events each.
// Seeds a scratch database (SQLite always; PostgreSQL too when VERDICT_DATABASE_URL is set), then
// computes the two alternately in one child process, so a busy machine slows both alike.
// Run: npm run bench:breakdowns -- --units 1000000    (figures: docs/analysis.md)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { sql, type RawBuilder } from 'kysely';
import type { DatabaseConfig } from '../src/config.js';
import type { AppContext } from '../src/context.js';
import { computeById } from '../src/features/analysis/service.js';
import { createWorkspace } from '../src/features/workspaces/service.js';
import { newId } from '../src/lib/ids.js';
import {
  DAY,
  EVENTS_PER_UNIT,
  SEED_BATCH,
  insertRunningExperiment,
  openBenchContext,
  openBenchContextAt,
  padded,
  sequence,
  standardMetrics,
} from './lib/analysis-seed.js';
import { scratchPostgres } from './lib/scratch-postgres.js';

const T0 = Date.UTC(2031, 0, 1);

/** The workspace, the same four metrics as bench/analysis.ts, and an experiment with two dimensions. */
async function seedDefinitions(ctx: AppContext): Promise<{ workspaceId: string; experimentId: string }> {
  const { workspace, environment } = await createWorkspace(ctx, `Bench ${newId()}`);
  const metrics = standardMetrics(workspace.id, T0);
  await ctx.db.insertInto('metrics').values(metrics).execute();
  const [primary, ...guardrails] = metrics.map((m) => m.id);
  const experimentId = await insertRunningExperiment(
    ctx,
    { workspaceId: workspace.id, environmentId: environment.id, at: T0, primary, guardrails },
    { dimensions: JSON.stringify(['country', 'plan']) },
  );
  return { workspaceId: workspace.id, experimentId };
}

/**
 * As bench/analysis.ts, plus each unit's assignment with its dimension values (country and plan,
 * 50 values each, spread unevenly; 1 unit in 20 without a country) and the exposure's source (one
 * of 3 API keys).
 */
async function seedFacts(ctx: AppContext, ids: { workspaceId: string; experimentId: string }, units: number): Promise<void> {
  const exposedAt = (i: RawBuilder<unknown>) => sql`(${sql.lit(T0)} + ((${i}) % 86400) * 1000)`;
  for (let from = 0; from < units; from += SEED_BATCH) {
    const to = Math.min(units, from + SEED_BATCH);
    const n = sql.ref('seq.n');
    const variant = sql`CASE WHEN ${n} % 2 = 0 THEN 'control' ELSE 'treatment' END`;
    await sql`INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source, source_key_id)
      SELECT ${padded(ctx, 'x', n)}, ${ids.workspaceId}, ${ids.experimentId}, ${padded(ctx, 'u', n)}, ${variant}, ${exposedAt(n)}, NULL, 'assign', 'key-' || (${n} % 3)
      FROM (${sequence(ctx, from, to)}) AS seq`.execute(ctx.db);
    // (n * n) % 2500 spreads the values unevenly, so the top 20 are not a tie.
    const country = sql`'"country":"c' || (((${n} * ${n}) % 2500) / 50) || '",'`;
    const values = sql`'{' || CASE WHEN ${n} % 20 = 0 THEN '' ELSE ${country} END || '"plan":"p' || ((${n} * 7) % 50) || '"}'`;
    await sql`INSERT INTO assignments (id, workspace_id, experiment_id, unit_id, variant_key, reason, exposure_logged_at, created_at, dimension_values)
      SELECT ${padded(ctx, 'a', n)}, ${ids.workspaceId}, ${ids.experimentId}, ${padded(ctx, 'u', n)}, ${variant}, 'bucketed', ${exposedAt(n)}, ${exposedAt(n)}, ${values}
      FROM (${sequence(ctx, from, to)}) AS seq`.execute(ctx.db);
  }
  const total = units * EVENTS_PER_UNIT;
  for (let from = 0; from < total; from += SEED_BATCH) {
    const to = Math.min(total, from + SEED_BATCH);
    const i = sql.ref('ev.i');
    const j = sql.ref('ev.j');
    const buys = sql`(${i} % 1000) < (CASE WHEN ${i} % 2 = 0 THEN 100 ELSE 110 END)`;
    await sql`INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late, client_event_id)
      SELECT ${padded(ctx, 'e', sql.ref('ev.n'))}, ${ids.workspaceId}, ${padded(ctx, 'u', i)},
        CASE WHEN ${j} < 3 THEN 'page_load' WHEN ${j} = 3 THEN 'view' WHEN ${buys} THEN 'purchase' ELSE 'other' END,
        CASE WHEN ${j} < 3 THEN '{"timing":{"load_ms":' || (100 + (${i} * 7 + ${j}) % 200) || '}}'
             WHEN ${j} = 4 THEN '{"order":{"total":' || (10 + ${i} % 90) || '.5}}' ELSE '{}' END,
        ${exposedAt(i)} + (${j} + 1) * 60000, ${exposedAt(i)} + (${j} + 1) * 60000 + 1000, 0, NULL
      FROM (SELECT seq.n AS n, seq.n % ${sql.lit(units)} AS i, seq.n / ${sql.lit(units)} AS j FROM (${sequence(ctx, from, to)}) AS seq) AS ev`.execute(ctx.db);
  }
  await (ctx.seam.name === 'postgres' ? sql`VACUUM ANALYZE` : sql`ANALYZE`).execute(ctx.db);
}

/** Child mode: alternately without and with breakdowns; prints [[without...], [with...], slices]. */
async function pairedMode(databaseUrl: string, experimentId: string, runs: number): Promise<void> {
  const ctx = await openBenchContextAt(databaseUrl, T0 + 20 * DAY);
  const seconds: number[][] = [[], []];
  // CPU of this process: on SQLite all the work (the read threads too), steadier than wall time on a busy machine.
  const cpu: number[][] = [[], []];
  let slices: string[] = [];
  for (let run = 0; run < runs; run += 1) {
    for (const [index, breakdowns] of [false, true].entries()) {
      const started = performance.now();
      const cpuStarted = process.cpuUsage();
      const snapshot = await computeById(ctx, experimentId, { trigger: 'cli', breakdowns });
      seconds[index]?.push((performance.now() - started) / 1000);
      const used = process.cpuUsage(cpuStarted);
      cpu[index]?.push((used.user + used.system) / 1e6);
      if (breakdowns) slices = snapshot?.breakdowns.map((b) => `${b.dimension}: ${b.values.length} values`) ?? [];
    }
  }
  await ctx.close();
  process.stdout.write(JSON.stringify({ seconds, cpu, slices, max_rss_mb: process.resourceUsage().maxRSS / 1024 }) + '\n');
}

async function benchOne(kind: 'sqlite' | 'postgres', units: number, runs: number): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bench-breakdowns-'));
  const pg = kind === 'postgres' ? await scratchPostgres(process.env.VERDICT_DATABASE_URL as string, 'bench') : null;
  const config: DatabaseConfig = pg ? { kind: 'postgres', url: pg.url } : { kind: 'sqlite', file: path.join(dataDir, 'verdict.sqlite') };
  const url = pg ? pg.url : path.join(dataDir, 'verdict.sqlite');
  try {
    const ctx = await openBenchContext(config, dataDir, true, T0 + 20 * DAY);
    const seedStarted = performance.now();
    const ids = await seedDefinitions(ctx);
    await seedFacts(ctx, ids, units);
    await ctx.close();
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const script = fileURLToPath(import.meta.url);
    const child = spawnSync(process.execPath, [...process.execArgv, script, 'paired', url, ids.experimentId, String(runs + 1)], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`paired compute process failed: ${child.stderr}`);
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as { seconds: number[][]; cpu: number[][]; slices: string[]; max_rss_mb: number };
    const [without = [], withBreakdowns = []] = result.seconds;
    const [cpuWithout = [], cpuWith = []] = result.cpu;
    const medianRatio = (base: number[], other: number[]) => {
      const ratios = base.slice(1).map((s, run) => (other[run + 1] ?? Number.NaN) / s);
      return [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] ?? Number.NaN;
    };
    const median = medianRatio(without, withBreakdowns);
    console.log(
      `${kind.padEnd(8)} units ${units.toLocaleString('en-US')}  events ${(units * EVENTS_PER_UNIT).toLocaleString('en-US')}  seed ${seedSeconds.toFixed(1)} s\n` +
        `         without/with breakdowns per pair: ${without.map((s, run) => `${s.toFixed(2)}/${withBreakdowns[run]?.toFixed(2)} s`).join(', ')}\n` +
        `         cpu of the process without/with: ${cpuWithout.map((s, run) => `${s.toFixed(2)}/${cpuWith[run]?.toFixed(2)} s`).join(', ')}; median cpu ratio ${medianRatio(cpuWithout, cpuWith).toFixed(2)}x\n` +
        `         median ratio ${median.toFixed(2)}x (first pair cold, left out); peak RSS ${result.max_rss_mb.toFixed(0)} MB; ${result.slices.join(', ')}`,
    );
  } finally {
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const program = new Command().name('bench:breakdowns').description('A snapshot with and without breakdowns (2 dimensions of 50 values, and source).');
program
  .option('-u, --units <list>', 'comma-separated unit counts', '100000')
  .option('-r, --runs <n>', 'measured pairs per size (one more, cold, is left out)', '3')
  .option('--sqlite-only', 'skip PostgreSQL even when VERDICT_DATABASE_URL is set')
  .option('--postgres-only', 'skip SQLite')
  .action(async (options: { units: string; runs: string; sqliteOnly?: boolean; postgresOnly?: boolean }) => {
    const kinds: Array<'sqlite' | 'postgres'> = [
      ...(options.postgresOnly ? [] : ['sqlite' as const]),
      ...(process.env.VERDICT_DATABASE_URL && !options.sqliteOnly ? ['postgres' as const] : []),
    ];
    for (const units of options.units.split(',').map(Number)) {
      for (const kind of kinds) await benchOne(kind, units, Number(options.runs));
    }
  });
program
  .command('paired <database> <experiment> <runs>', { hidden: true })
  .action(async (database: string, experiment: string, runs: string) => pairedMode(database, experiment, Number(runs)));

await program.parseAsync(process.argv);

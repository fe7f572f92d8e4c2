// Time of a CUPED snapshot against the same snapshot without CUPED (docs/statistics.md "2b"):
// N units with 5 events each after their exposure and 5 more in the 14 days before it (the
// pre-period the covariate reads). Seeds a scratch database (SQLite always; PostgreSQL too when
// VERDICT_DATABASE_URL is set), then computes the snapshot alternately without and with CUPED in a
// child process, so a busy machine slows both alike; the first pair is cold and left out.
// Run: npm run bench:cuped -- --units 1000000    (figures: docs/analysis.md)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { sql, type RawBuilder } from 'kysely';
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

const T0 = Date.UTC(2031, 0, 15);
const CUPED = JSON.stringify({ method: 'cuped', lookback_days: 14 });

/** The same four metrics as bench/analysis.ts (binary, revenue sum, duration mean, count) and a running experiment. */
async function seedDefinitions(ctx: AppContext): Promise<{ workspaceId: string; experimentId: string }> {
  const { workspace, environment } = await createWorkspace(ctx, `Bench ${newId()}`);
  const metrics = standardMetrics(workspace.id, T0);
  await ctx.db.insertInto('metrics').values(metrics).execute();
  const [primary, ...guardrails] = metrics.map((m) => m.id);
  const experimentId = await insertRunningExperiment(
    ctx,
    { workspaceId: workspace.id, environmentId: environment.id, at: T0, primary, guardrails },
    { variance_reduction: null },
  );
  return { workspaceId: workspace.id, experimentId };
}

/**
 * Unit i is exposed at T0 + (i mod 1 day, in seconds). Its five events after the exposure are
 * bench/analysis.ts's (three page loads, a view, a purchase for 10% of control and 11% of
 * treatment units or an unused event); its five pre-period events are the same kinds spread over
 * the 13 days before (j + 1) * 2.5 days, purchase for 15% of units (those that also buy after are
 * most of them: the correlation CUPED uses). Inserted round by round, in arrival order.
 */
async function seedFacts(ctx: AppContext, ids: { workspaceId: string; experimentId: string }, units: number): Promise<void> {
  const exposedAt = (i: RawBuilder<unknown>) => sql`(${sql.lit(T0)} + ((${i}) % 86400) * 1000)`;
  for (let from = 0; from < units; from += SEED_BATCH) {
    const to = Math.min(units, from + SEED_BATCH);
    const n = sql.ref('seq.n');
    await sql`INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source)
      SELECT ${padded(ctx, 'x', n)}, ${ids.workspaceId}, ${ids.experimentId}, ${padded(ctx, 'u', n)},
        CASE WHEN ${n} % 2 = 0 THEN 'control' ELSE 'treatment' END, ${exposedAt(n)}, NULL, 'assign'
      FROM (${sequence(ctx, from, to)}) AS seq`.execute(ctx.db);
  }
  const total = units * EVENTS_PER_UNIT * 2;
  for (let from = 0; from < total; from += SEED_BATCH) {
    const to = Math.min(total, from + SEED_BATCH);
    const i = sql.ref('ev.i');
    const j = sql.ref('ev.j');
    const post = sql`(${j} < 5)`;
    const k = sql`(${j} % 5)`;
    const buys = sql`(CASE WHEN ${post} THEN (${i} % 1000) < (CASE WHEN ${i} % 2 = 0 THEN 100 ELSE 110 END) ELSE (${i} % 1000) < 150 END)`;
    const at = sql`(CASE WHEN ${post} THEN ${exposedAt(i)} + (${k} + 1) * 60000 ELSE ${exposedAt(i)} - (${k} + 1) * ${sql.lit(2.5 * DAY)} END)`;
    await sql`INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late, client_event_id)
      SELECT ${padded(ctx, 'e', sql.ref('ev.n'))}, ${ids.workspaceId}, ${padded(ctx, 'u', i)},
        CASE WHEN ${k} < 3 THEN 'page_load' WHEN ${k} = 3 THEN 'view' WHEN ${buys} THEN 'purchase' ELSE 'other' END,
        CASE WHEN ${k} < 3 THEN '{"timing":{"load_ms":' || (100 + (${i} * 7 + ${j}) % 200) || '}}'
             WHEN ${k} = 4 THEN '{"order":{"total":' || (10 + ${i} % 90) || '.5}}' ELSE '{}' END,
        ${at}, ${at} + 1000, 0, NULL
      FROM (SELECT seq.n AS n, seq.n % ${sql.lit(units)} AS i, seq.n / ${sql.lit(units)} AS j FROM (${sequence(ctx, from, to)}) AS seq) AS ev`.execute(ctx.db);
  }
  await (ctx.seam.name === 'postgres' ? sql`VACUUM ANALYZE` : sql`ANALYZE`).execute(ctx.db);
}

/** Child process: alternately without and with CUPED, `runs` pairs; prints the wall seconds and the primary metric's variance reduction. */
async function pairedMode(databaseUrl: string, experimentId: string, runs: number): Promise<void> {
  const ctx = await openBenchContextAt(databaseUrl, T0 + 20 * DAY);
  const seconds: number[][] = [[], []];
  let reduction: number | null = null;
  for (let run = 0; run < runs; run += 1) {
    for (const [index, setting] of [null, CUPED].entries()) {
      await ctx.db.updateTable('experiments').set({ variance_reduction: setting }).where('id', '=', experimentId).execute();
      const started = performance.now();
      const snapshot = await computeById(ctx, experimentId, { trigger: 'cli' });
      seconds[index]?.push((performance.now() - started) / 1000);
      if (setting) reduction = snapshot?.primary_metric?.cuped?.variance_reduction ?? null;
    }
  }
  await ctx.close();
  process.stdout.write(JSON.stringify({ seconds, reduction, max_rss_mb: process.resourceUsage().maxRSS / 1024 }) + '\n');
}

async function benchOne(kind: 'sqlite' | 'postgres', units: number, runs: number, keep = false): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bench-cuped-'));
  const pgScratch = kind === 'postgres' ? await scratchPostgres(process.env.VERDICT_DATABASE_URL as string, 'cuped') : null;
  const url = pgScratch?.url ?? path.join(dataDir, 'verdict.sqlite');
  try {
    const ctx = await openBenchContext(pgScratch ? { kind: 'postgres', url } : { kind: 'sqlite', file: url }, dataDir, true, T0 + 20 * DAY);
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
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}') as { seconds: number[][]; reduction: number | null; max_rss_mb: number };
    const [without = [], withCuped = []] = result.seconds;
    const ratios = without
      .slice(1)
      .map((s, run) => (withCuped[run + 1] ?? Number.NaN) / s)
      .sort((a, b) => a - b);
    console.log(
      `${kind.padEnd(8)} units ${units.toLocaleString('en-US')}  events ${(units * EVENTS_PER_UNIT).toLocaleString('en-US')} + ${(units * EVENTS_PER_UNIT).toLocaleString('en-US')} pre-period  seed ${seedSeconds.toFixed(0)} s\n` +
        `         without / with CUPED, per pair: ${without.map((s, run) => `${s.toFixed(2)}/${withCuped[run]?.toFixed(2)} s`).join(', ')} (first cold, left out)\n` +
        `         median ratio ${(ratios[Math.floor(ratios.length / 2)] ?? Number.NaN).toFixed(2)}x; primary metric variance_reduction ${result.reduction?.toFixed(3)}; peak RSS ${result.max_rss_mb.toFixed(0)} MB`,
    );
  } finally {
    if (keep) console.log(`kept ${url} (drop it when done)`);
    else {
      await pgScratch?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

const program = new Command().name('bench:cuped').description('A CUPED snapshot against the same snapshot without it.');
program
  .option('-u, --units <list>', 'comma-separated unit counts', '100000')
  .option('-r, --runs <n>', 'measured pairs per size (one cold pair more is left out)', '3')
  .option('--sqlite-only', 'skip PostgreSQL even when VERDICT_DATABASE_URL is set')
  .option('--keep', 'keep the scratch databases (to EXPLAIN the queries afterwards)')
  .action(async (options: { units: string; runs: string; sqliteOnly?: boolean; keep?: boolean }) => {
    const kinds: Array<'sqlite' | 'postgres'> = process.env.VERDICT_DATABASE_URL && !options.sqliteOnly ? ['sqlite', 'postgres'] : ['sqlite'];
    console.log(`CUPED snapshot: 4 metrics (binary, revenue sum, duration mean, count), 14-day lookback, 2 variants; ${os.cpus().length} CPUs.\n`);
    for (const units of options.units.split(',').map(Number)) {
      for (const kind of kinds) await benchOne(kind, units, Number(options.runs), options.keep === true);
    }
  });
program
  .command('paired <database> <experiment> <runs>', { hidden: true })
  .action(async (database: string, experiment: string, runs: string) => pairedMode(database, experiment, Number(runs)));

await program.parseAsync(process.argv);

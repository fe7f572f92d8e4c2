/**
 * The facts and the scratch databases bench/analysis.ts and bench/incremental.ts share: units
 * exposed at T0 + (i mod 1 day, in seconds), in control when i is even, each with five events
 * (three page loads with load_ms, a view, and a purchase for 10% of control and 11% of treatment
 * units or else an unrelated event); a scratch SQLite file or PostgreSQL database; and a timing
 * child process that prints its figures as one JSON line.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type RawBuilder } from 'kysely';
import type { DatabaseConfig } from '../../src/config.js';
import type { AppContext } from '../../src/context.js';
import { DAY, EVENTS_PER_UNIT, padded, SEED_BATCH, sequence } from './analysis-seed.js';
import { scratchPostgres } from './scratch-postgres.js';

export interface FactScope {
  workspaceId: string;
  experimentId: string;
  /** The experiment's start: units are exposed during its first day. */
  t0: number;
}

const exposedAt = (t0: number, i: RawBuilder<unknown>) => sql`(${sql.lit(t0)} + ((${i}) % 86400) * 1000)`;

/** Rows seeded so far of a long seeding, for a progress line. */
export type SeedProgress = (done: number, total: number) => void;

/** Units [from, to), exposed at t0 + (i mod 1 day, in seconds), control when i is even. */
export async function seedUnits(ctx: AppContext, scope: FactScope, from: number, to: number, onProgress?: SeedProgress): Promise<void> {
  for (let start = from; start < to; start += SEED_BATCH) {
    onProgress?.(start - from, to - from);
    const n = sql.ref('seq.n');
    await sql`INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source)
      SELECT ${padded(ctx, 'x', n)}, ${scope.workspaceId}, ${scope.experimentId}, ${padded(ctx, 'u', n)},
        CASE WHEN ${n} % 2 = 0 THEN 'control' ELSE 'treatment' END, ${exposedAt(scope.t0, n)}, NULL, 'assign'
      FROM (${sequence(ctx, start, Math.min(to, start + SEED_BATCH))}) AS seq`.execute(ctx.db);
  }
  onProgress?.(to - from, to - from);
}

export interface EventBatch {
  /** Event numbers [from, to): event n is unit (n mod units)'s event number (n div units), of `units` units starting at `firstUnit`. */
  from: number;
  to: number;
  firstUnit: number;
  units: number;
  /** Added to occurred_at (minutes after the exposure) and received_at. */
  shift: number;
  /** Which events arrive 8 days after they occurred: none, all, or 1 in 97 purchases. */
  late: 'none' | 'all' | 'some purchases';
  /** Of the event ids. */
  prefix: string;
}

/**
 * Events round by round (every unit's first event, then every unit's second...), the order of
 * arrival, so one unit's events are spread over the table as they would be in production.
 */
export async function seedEvents(ctx: AppContext, scope: FactScope, batch: EventBatch, onProgress?: SeedProgress): Promise<void> {
  for (let start = batch.from; start < batch.to; start += SEED_BATCH) {
    onProgress?.(start - batch.from, batch.to - batch.from);
    const i = sql.ref('ev.i');
    const j = sql.ref('ev.j');
    const buys = sql`(${i} % 1000) < (CASE WHEN ${i} % 2 = 0 THEN 100 ELSE 110 END)`;
    const late = batch.late === 'all' ? sql`1 = 1` : batch.late === 'none' ? sql`1 = 0` : sql`(${j} = 4 AND ${buys} AND ${i} % 97 = 0)`;
    const occurred = sql`${exposedAt(scope.t0, i)} + (${j} + 1) * 60000 + ${sql.lit(batch.shift)}`;
    await sql`INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late, client_event_id)
      SELECT ${padded(ctx, batch.prefix, sql.ref('ev.n'))}, ${scope.workspaceId}, ${padded(ctx, 'u', i)},
        CASE WHEN ${j} < 3 THEN 'page_load' WHEN ${j} = 3 THEN 'view' WHEN ${buys} THEN 'purchase' ELSE 'other' END,
        CASE WHEN ${j} < 3 THEN '{"timing":{"load_ms":' || (100 + (${i} * 7 + ${j}) % 200) || '}}'
             WHEN ${j} = 4 THEN '{"order":{"total":' || (10 + ${i} % 90) || '.5}}' ELSE '{}' END,
        ${occurred}, ${occurred} + CASE WHEN ${late} THEN ${sql.lit(8 * DAY)} ELSE 1000 END,
        CASE WHEN ${late} THEN 1 ELSE 0 END, NULL
      FROM (SELECT seq.n AS n, ${sql.lit(batch.firstUnit)} + (seq.n - ${sql.lit(batch.from)}) % ${sql.lit(batch.units)} AS i,
              (seq.n - ${sql.lit(batch.from)}) / ${sql.lit(batch.units)} AS j
            FROM (${sequence(ctx, start, Math.min(batch.to, start + SEED_BATCH))}) AS seq) AS ev`.execute(ctx.db);
  }
  onProgress?.(batch.to - batch.from, batch.to - batch.from);
}

/** bench:analysis's facts: `units` units, each with five events; 1 in 97 purchases arrives 8 days late. */
export async function seedAnalysisFacts(ctx: AppContext, scope: FactScope, units: number, onProgress?: (what: string) => SeedProgress): Promise<void> {
  await seedUnits(ctx, scope, 0, units, onProgress?.('exposures'));
  const events = { from: 0, to: units * EVENTS_PER_UNIT, firstUnit: 0, units, shift: 0, late: 'some purchases' as const, prefix: 'e' };
  await seedEvents(ctx, scope, events, onProgress?.('events'));
  await analyzeTables(ctx);
}

/**
 * Planner statistics, and on PostgreSQL the visibility map autovacuum would set, without which
 * every index-only scan of events_metric_idx would visit the table too.
 */
export async function analyzeTables(ctx: AppContext): Promise<void> {
  await (ctx.seam.name === 'postgres' ? sql`VACUUM ANALYZE` : sql`ANALYZE`).execute(ctx.db);
}

export interface Scratch {
  label: 'sqlite' | 'postgres';
  config: DatabaseConfig;
  /** What a child process opens (openBenchContextAt). */
  url: string;
  dataDir: string;
  drop(): Promise<void>;
}

/** A scratch SQLite file, or a database of its own on the PostgreSQL server of `baseUrl`. */
export async function scratchDatabase(kind: 'sqlite' | 'postgres', baseUrl: string | undefined, label: string): Promise<Scratch> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `verdict-bench-${label}-`));
  if (kind === 'sqlite') {
    const file = path.join(dataDir, 'verdict.sqlite');
    return { label: kind, config: { kind, file }, url: file, dataDir, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
  const database = await scratchPostgres(baseUrl as string, 'bench');
  return {
    label: kind,
    config: { kind, url: database.url },
    url: database.url,
    dataDir,
    drop: async () => {
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `script` with `args` in a fresh Node process (so its peak RSS is its own) and parses the JSON
 * line it prints last; with `showProgress`, what it writes to stderr (its progress) goes to ours.
 */
export function runJsonChild<T>(script: string, args: readonly string[], showProgress = false): T {
  // VERDICT_BENCH_CPU_PROF=DIR writes a V8 CPU profile of each child there (where its time goes).
  const profile = process.env.VERDICT_BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.VERDICT_BENCH_CPU_PROF}`] : [];
  const child = spawnSync(process.execPath, [...process.execArgv, ...profile, script, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    stdio: ['ignore', 'pipe', showProgress ? 'inherit' : 'pipe'],
  });
  if (child.status !== 0) throw new Error(`${args[0] ?? 'child'} process failed: ${child.stderr ?? '(its messages are above)'}`);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? 'null') as T;
}

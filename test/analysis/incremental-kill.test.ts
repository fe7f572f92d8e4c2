import { spawn } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DAY, EVENTS_PER_UNIT, insertRunningExperiment, openBenchContext, standardMetrics } from '../../bench/lib/analysis-seed.js';
import { analyzeTables, seedEvents, seedUnits, type FactScope } from '../../bench/lib/bench-facts.js';
import type { AppContext } from '../../src/context.js';
import { computeById } from '../../src/features/analysis/service.js';
import { createWorkspace } from '../../src/features/workspaces/service.js';
import { createTestDatabase, type DialectName, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { expectSameAnalysis } from './incremental-support.js';

/**
 * Issue #32, faults for real: `verdict analyze ID` (an incremental refresh in a process of its
 * own) is killed with SIGKILL while it writes the rollups, once during the first build and once
 * during a refresh of what came since the watermark; the next incremental snapshot equals the
 * full computation (counts exactly, every number within 1e-9 relative). Then two `verdict
 * analyze` processes refresh the same experiment at once: neither double-counts.
 */
const UNITS = 20_000;
// Real processes use the real clock: the experiment started three days ago.
const T0 = Math.floor((Date.now() - 3 * DAY) / 60_000) * 60_000;

interface Setup {
  ctx: AppContext;
  database: TestDatabase;
  env: Record<string, string>;
  scope: FactScope;
  units: number;
}

async function seed(dialect: DialectName): Promise<Setup> {
  const database = await createTestDatabase(dialect);
  const ctx = await openBenchContext(database.config, database.dataDir, dialect === 'sqlite', Date.now());
  const { workspace, environment } = await createWorkspace(ctx, 'Interrupted refresh');
  const metrics = standardMetrics(workspace.id, T0);
  await ctx.db.insertInto('metrics').values(metrics).execute();
  const [primary, ...guardrails] = metrics.map((metric) => metric.id);
  const experimentId = await insertRunningExperiment(ctx, { workspaceId: workspace.id, environmentId: environment.id, at: T0, primary, guardrails });
  const scope = { workspaceId: workspace.id, experimentId, t0: T0 };
  await seedUnits(ctx, scope, 0, UNITS);
  await seedEvents(ctx, scope, { from: 0, to: UNITS * EVENTS_PER_UNIT, firstUnit: 0, units: UNITS, shift: 0, late: 'none', prefix: 'e' });
  await analyzeTables(ctx);
  const url = database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`;
  const env: Record<string, string> = { VERDICT_DATABASE_URL: url, VERDICT_DATA_DIR: database.dataDir, VERDICT_LOG_LEVEL: 'error' };
  // A killed process's PostgreSQL backend would otherwise run its statement to the end (minutes on
  // a loaded machine) before it finds the client gone and rolls back, and the next refresh waits
  // for its lock; with this setting (PostgreSQL 14+, read by node-postgres from PGOPTIONS) it
  // checks the client every 100 ms and rolls back at once. The outcome is the same rollback.
  if (database.config.kind === 'postgres') env.PGOPTIONS = '-c client_connection_check_interval=100';
  return { ctx, database, env, scope, units: UNITS };
}

/** More events: a later one for a third of the units, and new units exposed with their five events each. */
async function addEvents(setup: Setup, round: number, newUnits: number): Promise<void> {
  const fresh = Math.round(setup.units / 3);
  await seedEvents(setup.ctx, setup.scope, {
    from: 0,
    to: fresh,
    firstUnit: round,
    units: fresh,
    shift: DAY + round * 60_000,
    late: 'none',
    prefix: `f${round}-`,
  });
  await seedUnits(setup.ctx, setup.scope, setup.units, setup.units + newUnits);
  const events = { from: 0, to: newUnits * EVENTS_PER_UNIT, firstUnit: setup.units, units: newUnits, shift: 0, late: 'none' as const, prefix: `n${round}-` };
  await seedEvents(setup.ctx, setup.scope, events);
  setup.units += newUnits;
}

interface Analysis {
  kill(): Promise<void>;
  exited(): boolean;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `verdict analyze ID` (incremental) in a child process. */
function analyze(setup: Setup): Analysis {
  const child = spawn(process.execPath, ['bin/verdict.js', 'analyze', setup.scope.experimentId], {
    env: { ...process.env, ...setup.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    done,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    async kill() {
      child.kill('SIGKILL');
      await done;
    },
  };
}

/** A complete `verdict analyze` (incremental), its snapshot as printed. */
async function refreshed(setup: Setup): Promise<any> {
  const { code, stdout, stderr } = await analyze(setup).done;
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout);
}

/** The full computation (raw events, rollups untouched), here: the oracle. */
async function full(setup: Setup): Promise<any> {
  return JSON.parse(JSON.stringify(await computeById(setup.ctx, setup.scope.experimentId, { trigger: 'api', mode: 'full' })));
}

/** The two are the same analysis of the data; only the days elapsed differ, with the moment each was computed. */
function expectSameData(incremental: any, oracle: any, what: string): void {
  const withoutAge = (snapshot: any) => ({ ...snapshot, decision: { ...snapshot.decision, days_elapsed: null } });
  expectSameAnalysis(withoutAge(incremental), withoutAge(oracle), what);
}

/** Whether another connection holds SQLite's write lock now (a refresh writing), without waiting for it. */
function sqliteWriting(file: string): boolean {
  const probe = new BetterSqlite3(file, { timeout: 0 });
  try {
    probe.prepare('BEGIN IMMEDIATE').run();
    probe.prepare('ROLLBACK').run();
    return false;
  } catch (error) {
    if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return true;
    throw error;
  } finally {
    probe.close();
  }
}

/** Whether a PostgreSQL transaction other than ours is writing the rollups now. */
async function postgresWriting(ctx: AppContext): Promise<boolean> {
  const result = await sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM pg_stat_activity
    WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
      AND state IN ('active', 'idle in transaction') AND strpos(query, 'analysis_rollup') > 0`.execute(ctx.db);
  return Number(result.rows[0]?.n ?? 0) > 0;
}

/**
 * Polls every 10 ms until the refresh is writing (three times in a row, so not a start-up
 * statement), then kills it. A fixed sleep alone would miss the moment on a fast or loaded machine.
 */
async function killWhileWriting(setup: Setup, analysis: Analysis, before: () => Promise<boolean> = async () => true): Promise<void> {
  const config = setup.database.config;
  const writing = () => (config.kind === 'sqlite' ? Promise.resolve(sqliteWriting(config.file)) : postgresWriting(setup.ctx));
  // Generous: a loaded machine may take long to start the process; the moment itself is polled.
  const deadline = Date.now() + 180_000;
  try {
    for (let seen = 0; seen < 3;) {
      if (analysis.exited()) throw new Error('the refresh ended before it could be killed: make the base bigger');
      if (Date.now() > deadline) throw new Error('the refresh never wrote its rollups');
      seen = (await before()) && (await writing()) ? seen + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    // Killed at that moment, or at once when the test failed: never left running.
    await analysis.kill();
  }
}

async function rollupState(setup: Setup) {
  return setup.ctx.db.selectFrom('analysis_rollup_state').selectAll().where('experiment_id', '=', setup.scope.experimentId).executeTakeFirst();
}

async function snapshotCount(setup: Setup): Promise<number> {
  const rows = await setup.ctx.db.selectFrom('analysis_snapshots').select('id').where('experiment_id', '=', setup.scope.experimentId).execute();
  return rows.length;
}

async function rollupUnits(setup: Setup): Promise<number> {
  const result = await sql<{ n: unknown }>`SELECT COUNT(*) AS n FROM analysis_rollup_units WHERE experiment_id = ${setup.scope.experimentId}`.execute(
    setup.ctx.db,
  );
  return Number(result.rows[0]?.n ?? 0);
}

describeEach('an incremental refresh killed with SIGKILL', {}, ({ dialect }) => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await seed(dialect);
  }, 120_000);
  afterAll(async () => {
    await setup?.ctx.close();
    await setup?.database.drop();
  });

  it('resumes a first build killed midway and gives the full computation', { timeout: 300_000 }, async () => {
    const building = analyze(setup);
    // On SQLite the build commits in steps: wait until some units' rows are in, so it dies midway.
    const someBuilt = async () => dialect !== 'sqlite' || (await rollupUnits(setup)) > 0;
    await killWhileWriting(setup, building, someBuilt);
    expect(await snapshotCount(setup)).toBe(0);
    const state = await rollupState(setup);
    // No complete refresh is recorded: none at all, or a build in steps still in progress.
    expect(state === undefined || state.progress !== null, JSON.stringify(state)).toBe(true);
    await addEvents(setup, 1, 50);
    const next = await refreshed(setup);
    expect(next.computation.mode).toBe('incremental');
    expectSameData(next, await full(setup), 'after the killed build');
  });

  it('leaves the rollups as they were when a refresh since the watermark is killed, and the next is exact', { timeout: 300_000 }, async () => {
    const before = await rollupState(setup);
    const snapshots = await snapshotCount(setup);
    expect(before?.progress).toBeNull();
    // Enough new events that the refresh writes for a while (on SQLite in several rounds).
    await addEvents(setup, 2, 2_000);
    await killWhileWriting(setup, analyze(setup));
    const after = await rollupState(setup);
    if (dialect === 'sqlite' && JSON.stringify(after) !== JSON.stringify(before)) {
      // SQLite refreshes in rounds of new events, each committed with its watermark: the kill
      // may come after some of them, never inside one.
      expect(after?.progress).toBeNull();
      const eventsMark = (state: typeof before) => JSON.parse(state?.watermark ?? '{}').events?.rowid as number;
      expect(eventsMark(after)).toBeGreaterThan(eventsMark(before));
    } else expect(after).toEqual(before);
    expect(await snapshotCount(setup)).toBe(snapshots);
    await addEvents(setup, 3, 20);
    const next = await refreshed(setup);
    expect(next.computation.events_read).toBeGreaterThan(0);
    expectSameData(next, await full(setup), 'after the killed refresh');
  });

  it('never double-counts when two processes refresh the experiment at once', { timeout: 300_000 }, async () => {
    await addEvents(setup, 4, 500);
    const both = await Promise.all([refreshed(setup), refreshed(setup)]);
    const oracle = await full(setup);
    both.forEach((snapshot, index) => expectSameData(snapshot, oracle, `process ${index}`));
    const read = both.map((snapshot) => snapshot.computation.events_read as number).sort((a, b) => a - b);
    expect(read[1]).toBeGreaterThan(0);
    // PostgreSQL: one of them read the new events, the other found nothing new after it. SQLite
    // refreshes in rounds, each its own transaction: the two may take turns round by round.
    if (dialect === 'postgres') expect(read[0]).toBe(0);
  });
});

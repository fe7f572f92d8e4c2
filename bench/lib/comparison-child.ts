/**
 * The child processes of bench:analysis --clickhouse (clickhouse-comparison.ts), one per step so
 * each one's peak RSS is its own and the embedded ClickHouse engine is open in one process at a
 * time (it binds its directory to one process): seed ClickHouse, compute snapshots on any store,
 * drain events into any store. Each prints its figures as one JSON line; progress goes to stderr.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Command } from 'commander';
import pino from 'pino';
import { loadConfig, type DatabaseConfig } from '../../src/config.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/context.js';
import { createWorkspace } from '../../src/features/workspaces/service.js';
import { newId } from '../../src/lib/ids.js';
import { ANALYSIS_T0, DAY, embeddedClickHouse, openBenchContext, openBenchContextAt } from './analysis-seed.js';
import { eventsTableShape, seedClickHouseFacts } from './clickhouse-facts.js';
import { BATCH, CONCURRENCY, measureAppend, measureDrain } from './drain-rate.js';
import { refreshFigures } from './clickhouse-refresh.js';
import { seedProgress } from './seed-progress.js';
import { snapshotFigures } from './snapshot-figures.js';
import { cpuSince } from './thread-cpu.js';

const NOW = ANALYSIS_T0 + 20 * DAY;
const NONE = '-';
const envOf = (clickhouse: string) => (clickhouse === NONE ? {} : embeddedClickHouse(clickhouse));

function print(figures: unknown): void {
  process.stdout.write(JSON.stringify(figures) + '\n');
}

async function seed(sqliteFile: string, clickhouse: string, workspaceId: string, experimentId: string, units: number): Promise<void> {
  const ctx = await openBenchContext({ kind: 'sqlite', file: sqliteFile }, path.dirname(sqliteFile), true, NOW, embeddedClickHouse(clickhouse));
  try {
    const ch = ctx.clickhouse;
    if (!ch) throw new Error('no ClickHouse in the context');
    const started = performance.now();
    await seedClickHouseFacts(ch, { workspaceId, experimentId, t0: ANALYSIS_T0 }, units, (what) => seedProgress(`clickhouse ${what}`));
    print({ seconds: (performance.now() - started) / 1000, ...(await eventsTableShape(ch)) });
  } finally {
    await ctx.close();
  }
}

async function stored(ctx: AppContext): Promise<number> {
  if (ctx.clickhouse) {
    const result = await ctx.clickhouse.client.query({ query: 'SELECT count() AS n FROM events FINAL', format: 'JSONEachRow' });
    const [row] = await result.json<{ n: string }>();
    return Number(row?.n);
  }
  const row = await ctx.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Appends `total` events to the buffer, then times the drain into the store (ClickHouse's events
 * table, or the primary database's) in batches of `batch` (VERDICT_BUFFER_DRAIN_BATCH's default
 * when 0): events/s in wall time, events per CPU-second of the process, that CPU split between the
 * main thread and the others (the embedded engine's), and the load average before and after.
 */
async function drain(databaseUrl: string, clickhouse: string, total: number, batchSize: number): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bench-drain-'));
  const database: DatabaseConfig = databaseUrl.startsWith('postgres') ? { kind: 'postgres', url: databaseUrl } : { kind: 'sqlite', file: databaseUrl };
  const env = {
    VERDICT_DATA_DIR: dataDir,
    VERDICT_BUFFER_MAX_PENDING: String(total + BATCH * CONCURRENCY),
    ...(batchSize > 0 ? { VERDICT_BUFFER_DRAIN_BATCH: String(batchSize) } : {}),
    ...envOf(clickhouse),
  };
  const ctx = await createContext(loadConfig(env, { database, logLevel: 'silent' }), pino({ level: 'silent' }), { migrate: true });
  try {
    const { workspace } = await createWorkspace(ctx, `Bench ${newId()}`);
    await measureAppend(ctx, workspace.id, total);
    const batch = ctx.config.events.drainBatchSize;
    const loadBefore = os.loadavg()[0] ?? 0;
    const cpu = cpuSince();
    const perSecond = await measureDrain(ctx, total, batch, ctx.eventStorage.persist, () => stored(ctx));
    const used = cpu();
    print({
      events_per_second: perSecond,
      events_per_cpu_second: total / used.total,
      cpu_seconds: used,
      batch,
      load: [loadBefore, os.loadavg()[0] ?? 0],
    });
  } finally {
    await ctx.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const program = new Command().name('comparison-child');
program
  .command('seed <sqlite> <clickhouse> <workspace> <experiment> <units>')
  .action((sqlite: string, clickhouse: string, workspace: string, experiment: string, units: string) =>
    seed(sqlite, clickhouse, workspace, experiment, Number(units)),
  );
program
  .command('compute <database> <clickhouse> <experiment> <runs>')
  .action(async (database: string, clickhouse: string, experiment: string, runs: string) => {
    print(await snapshotFigures(await openBenchContextAt(database, NOW, envOf(clickhouse)), experiment, Number(runs), 'full'));
  });
program
  .command('refresh <database> <clickhouse> <workspace> <experiment> <units>')
  .action(async (database: string, clickhouse: string, workspace: string, experiment: string, units: string) => {
    const ctx = await openBenchContextAt(database, NOW, envOf(clickhouse));
    print(await refreshFigures(ctx, { workspaceId: workspace, experimentId: experiment, t0: ANALYSIS_T0 }, Number(units)));
  });
program
  .command('drain <database> <clickhouse> <events> [batch]')
  .action((database: string, clickhouse: string, events: string, batch = '0') => drain(database, clickhouse, Number(events), Number(batch)));

await program.parseAsync(process.argv);

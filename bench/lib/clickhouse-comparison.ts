/**
 * bench:analysis --clickhouse (docs/analysis.md "ClickHouse"): per size, the same experiment and
 * facts in SQLite, PostgreSQL (when VERDICT_DATABASE_URL is set) and the embedded ClickHouse
 * engine, and the full snapshot's wall time, CPU and peak RSS in each, measured in one run so the
 * ratios compare like with like; then the drain's events/s into each, through the drainer's own
 * persistence, on a smaller volume. Every figure is printed with the load average beside it.
 * SQLite and PostgreSQL are seeded up to --sql-up-to events only (100M events take them hours
 * here): above it the output says so.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { CHDB_VERSION } from '../../src/clickhouse/client.js';
import { ANALYSIS_T0, DAY, EVENTS_PER_UNIT, openBenchContext, seedAnalysisDefinitions } from './analysis-seed.js';
import { markMirrorCurrent } from './clickhouse-facts.js';
import { runJsonChild, scratchDatabase, seedAnalysisFacts } from './bench-facts.js';
import { seedProgress } from './seed-progress.js';
import type { ComputeFigures } from './snapshot-figures.js';
import type { RefreshFigures } from './clickhouse-refresh.js';

export interface ComparisonOptions {
  units: number[];
  runs: number;
  /** SQLite and PostgreSQL are seeded up to this many events. */
  sqlUpTo: number;
  /** Events drained into each store for the drain's rate; 0 skips it. */
  drainEvents: number;
  /** The stores measured (PostgreSQL only when VERDICT_DATABASE_URL is set). */
  stores: Store[];
  /** Also the incremental refresh after +1% events against the full computation (clickhouse-refresh.ts). */
  refresh: boolean;
}

export type Store = 'sqlite' | 'postgres' | 'clickhouse';

const CHILD = fileURLToPath(new URL('./comparison-child.ts', import.meta.url));
const NOW = ANALYSIS_T0 + 20 * DAY;
const NONE = '-';

const load = () =>
  `load ${os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`;
const count = (n: number) => n.toLocaleString('en-US');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

function report(store: Store, units: number, seedSeconds: number, figures: ComputeFigures, note = ''): void {
  const times = figures.seconds.map((s, run) => `${s.toFixed(2)} s (cpu ${figures.cpu_seconds[run]?.toFixed(1)})`).join(', ');
  console.log(
    `${store.padEnd(10)} events ${count(units * EVENTS_PER_UNIT).padStart(11)}  seed ${seedSeconds.toFixed(0).padStart(5)} s${note}  ` +
      `snapshot ${times}  median ${median(figures.seconds).toFixed(2)} s  peak RSS ${figures.max_rss_mb.toFixed(0)} MB  ` +
      `units ${figures.units.join('/')} ${figures.verdict} [${figures.store}]  ${load()}`,
  );
}

/** Seeds a scratch SQLite or PostgreSQL database with the facts and times the snapshot in a child. */
async function measureSql(kind: 'sqlite' | 'postgres', units: number, runs: number): Promise<ComputeFigures> {
  const scratch = await scratchDatabase(kind, process.env.VERDICT_DATABASE_URL, 'chcompare');
  try {
    const ctx = await openBenchContext(scratch.config, scratch.dataDir, true, NOW);
    const started = performance.now();
    const ids = await seedAnalysisDefinitions(ctx, ANALYSIS_T0);
    await seedAnalysisFacts(ctx, { ...ids, t0: ANALYSIS_T0 }, units, (what) => seedProgress(`${kind} ${what}`));
    const seedSeconds = (performance.now() - started) / 1000;
    await ctx.close();
    const figures = runJsonChild<ComputeFigures>(CHILD, ['compute', scratch.url, NONE, ids.experimentId, String(runs)]);
    report(kind, units, seedSeconds, figures);
    return figures;
  } finally {
    await scratch.drop();
  }
}

/** The definitions in a scratch SQLite file (the primary database), the facts in a scratch embedded ClickHouse. */
async function measureClickHouse(units: number, runs: number, refresh: boolean): Promise<ComputeFigures> {
  const scratch = await scratchDatabase('sqlite', undefined, 'chcompare');
  const directory = path.join(scratch.dataDir, 'clickhouse');
  try {
    const ctx = await openBenchContext(scratch.config, scratch.dataDir, true, NOW);
    const ids = await seedAnalysisDefinitions(ctx, ANALYSIS_T0);
    await markMirrorCurrent(ctx, ids.experimentId);
    await ctx.close();
    const seeded = runJsonChild<{ seconds: number; rows: number; parts: number }>(
      CHILD,
      ['seed', scratch.url, directory, ids.workspaceId, ids.experimentId, String(units)],
      true,
    );
    const figures = runJsonChild<ComputeFigures>(CHILD, ['compute', scratch.url, directory, ids.experimentId, String(runs)]);
    report('clickhouse', units, seeded.seconds, figures, ` (${count(seeded.rows)} rows in ${seeded.parts} parts)`);
    if (refresh) {
      const r = runJsonChild<RefreshFigures>(
        CHILD,
        ['refresh', scratch.url, directory, ids.workspaceId, ids.experimentId, String(units)],
        process.env.VERDICT_BENCH_TRACE === '1',
      );
      console.log(
        `${'clickhouse'.padEnd(10)} incremental: first build ${r.build_seconds.toFixed(2)} s, refresh after +1% ${r.first_refresh_seconds.toFixed(2)} s; another +${count(r.added_events)} events (+1%): ` +
          `refresh ${r.refresh_seconds.toFixed(2)} s (cpu ${r.refresh_cpu_seconds.toFixed(1)}; events_read ${count(r.refresh_events_read)}, units_refreshed ${count(r.refresh_units_refreshed)}), ` +
          `full ${r.full_seconds.toFixed(2)} s (cpu ${r.full_cpu_seconds.toFixed(1)}; events_read ${count(r.full_events_read)}): ` +
          `refresh/full ${r.ratio.toFixed(3)}x wall, ${r.cpu_ratio.toFixed(3)}x CPU  peak RSS ${r.max_rss_mb.toFixed(0)} MB  ${load()}`,
      );
    }
    return figures;
  } finally {
    await scratch.drop();
  }
}

function compareLine(units: number, results: Map<Store, ComputeFigures>): void {
  if (!results.has('clickhouse')) return;
  const clickhouse = median(results.get('clickhouse')?.seconds ?? []);
  const ratios = (['sqlite', 'postgres'] as const).flatMap((store) => {
    const figures = results.get(store);
    if (!figures) return [];
    const ratio = median(figures.seconds) / clickhouse;
    return [ratio >= 1 ? `${ratio.toFixed(1)}x faster than ${store}` : `${(1 / ratio).toFixed(1)}x slower than ${store}`];
  });
  if (ratios.length > 0)
    console.log(`${''.padEnd(10)} at ${count(units * EVENTS_PER_UNIT)} events, ClickHouse's median snapshot (wall) is ${ratios.join(', ')}`);
}

/** The drain's events/s into each store, each in a child of its own on fresh scratch databases. */
async function measureDrains(stores: Store[], events: number): Promise<void> {
  console.log(`\nDrain: ${count(events)} events appended to the buffer, then drained by the drainer's persistence into each store:`);
  for (const store of stores) {
    const scratch = await scratchDatabase(store === 'postgres' ? 'postgres' : 'sqlite', process.env.VERDICT_DATABASE_URL, 'chdrain');
    try {
      const clickhouse = store === 'clickhouse' ? path.join(scratch.dataDir, 'clickhouse') : NONE;
      const figures = runJsonChild<{ events_per_second: number; events_per_cpu_second: number; batch: number }>(CHILD, [
        'drain',
        scratch.url,
        clickhouse,
        String(events),
      ]);
      console.log(
        `${store.padEnd(10)} drain ${count(Math.round(figures.events_per_second)).padStart(9)} events/s, ${count(Math.round(figures.events_per_cpu_second))} per CPU-second (batches of ${count(figures.batch)})  ${load()}`,
      );
    } finally {
      await scratch.drop();
    }
  }
}

export async function compareWithClickHouse(options: ComparisonOptions): Promise<void> {
  const sqlStores = (['sqlite', 'postgres'] as const).filter(
    (store) => options.stores.includes(store) && (store === 'sqlite' || process.env.VERDICT_DATABASE_URL),
  );
  console.log(
    `Full analysis snapshot in ClickHouse (embedded, chdb ${CHDB_VERSION})${sqlStores.length > 0 ? ` beside ${sqlStores.join(' and ')}` : ''}: 4 metrics (binary, revenue sum, duration mean, count), ` +
      `2 variants, ${EVENTS_PER_UNIT} events per unit; ${os.cpus().length} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(0)} GB; ${options.runs} snapshots per store (the first cold); ${load()}\n`,
  );
  for (const units of options.units) {
    const results = new Map<Store, ComputeFigures>();
    for (const kind of sqlStores) {
      if (units * EVENTS_PER_UNIT > options.sqlUpTo) {
        console.log(
          `${kind.padEnd(10)} events ${count(units * EVENTS_PER_UNIT).padStart(11)}  not measured: seeding it takes longer than this run allows (--sql-up-to ${count(options.sqlUpTo)} events)`,
        );
        continue;
      }
      results.set(kind, await measureSql(kind, units, options.runs));
    }
    if (options.stores.includes('clickhouse')) results.set('clickhouse', await measureClickHouse(units, options.runs, options.refresh));
    compareLine(units, results);
  }
  if (options.drainEvents > 0) await measureDrains([...sqlStores, ...options.stores.filter((store) => store === 'clickhouse')], options.drainEvents);
}

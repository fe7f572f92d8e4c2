// The drain into ClickHouse alone (docs/analysis.md "ClickHouse", the drain): events appended to
// the buffer of a scratch primary database (SQLite; PostgreSQL too when VERDICT_DATABASE_URL is
// set), then moved into the embedded ClickHouse engine by the drainer's own persistence, each run
// in a fresh child process with fresh stores. Every run prints events/s in wall time, events per
// CPU-second of the process (its main thread and its other threads, chiefly the engine's, apart)
// and the load average before and after: on a loaded machine the CPU figure is what compares.
// Run: npm run bench:clickhouse-drain -- --events 500000 --runs 3
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { CHDB_VERSION, chdbInstalled } from '../src/clickhouse/client.js';
import { runJsonChild, scratchDatabase } from './lib/bench-facts.js';
import type { CpuSplit } from './lib/thread-cpu.js';

const CHILD = fileURLToPath(new URL('./lib/comparison-child.ts', import.meta.url));

interface DrainFigures {
  events_per_second: number;
  events_per_cpu_second: number;
  cpu_seconds: CpuSplit;
  batch: number;
  load: [number, number];
}

interface Options {
  events: string;
  runs: string;
  batch: string;
  primary: string;
}

const count = (n: number) => Math.round(n).toLocaleString('en');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

async function drainOnce(primary: 'sqlite' | 'postgres', events: number, batch: number): Promise<DrainFigures> {
  const scratch = await scratchDatabase(primary, process.env.VERDICT_DATABASE_URL, 'chdrain');
  try {
    return runJsonChild<DrainFigures>(CHILD, ['drain', scratch.url, path.join(scratch.dataDir, 'clickhouse'), String(events), String(batch)]);
  } finally {
    await scratch.drop();
  }
}

function line(primary: string, run: number, f: DrainFigures): string {
  const { total, main, others } = f.cpu_seconds;
  return (
    `${primary.padEnd(8)} batch ${count(f.batch).padStart(6)} run ${run}: ${count(f.events_per_second).padStart(7)} events/s wall, ` +
    `${count(f.events_per_cpu_second).padStart(7)} per CPU-second (${total.toFixed(2)} CPU-s: main thread ${main.toFixed(2)}, other threads ${others.toFixed(2)})  ` +
    `load ${f.load[0].toFixed(2)} -> ${f.load[1].toFixed(2)}`
  );
}

async function main(options: Options): Promise<void> {
  if (!(await chdbInstalled())) throw new Error(`the drain into ClickHouse needs the embedded engine: npm install --no-save chdb@${CHDB_VERSION}`);
  const events = Number(options.events);
  const runs = Number(options.runs);
  const batches = options.batch.split(',').map(Number);
  const primaries = options.primary.split(',') as Array<'sqlite' | 'postgres'>;
  if (primaries.includes('postgres') && !process.env.VERDICT_DATABASE_URL) throw new Error('--primary postgres needs VERDICT_DATABASE_URL');
  console.log(
    `Drain into ClickHouse (embedded, chdb ${CHDB_VERSION}): ${count(events)} events per run, ${runs} runs per primary store and batch; ` +
      `${os.cpus().length} CPUs; load ${(os.loadavg()[0] ?? 0).toFixed(2)}\n`,
  );
  for (const primary of primaries) {
    for (const batch of batches) {
      const figures: DrainFigures[] = [];
      for (let run = 1; run <= runs; run += 1) {
        figures.push(await drainOnce(primary, events, batch));
        console.log(line(primary, run, figures.at(-1) as DrainFigures));
      }
      console.log(
        `${primary.padEnd(8)} batch ${count(figures[0]?.batch ?? batch).padStart(6)} median: ${count(median(figures.map((f) => f.events_per_second)))} events/s wall, ` +
          `${count(median(figures.map((f) => f.events_per_cpu_second)))} per CPU-second\n`,
      );
    }
  }
  console.log(`load at the end ${(os.loadavg()[0] ?? 0).toFixed(2)}`);
}

await new Command()
  .name('bench:clickhouse-drain')
  .description('Events per second (wall and per CPU-second) that the drain moves from the buffer into the embedded ClickHouse engine.')
  .option('-e, --events <n>', 'events appended, then drained, per run', '500000')
  .option('-r, --runs <n>', 'runs per primary store and batch size', '3')
  .option('--batch <list>', 'comma-separated drain batch sizes (VERDICT_BUFFER_DRAIN_BATCH; 0: its default)', '0')
  .option('--primary <list>', 'primary stores holding the buffer (sqlite, postgres: needs VERDICT_DATABASE_URL)', 'sqlite')
  .action(main)
  .parseAsync(process.argv);

// The events pipeline's storage side alone: Verdict's own buffer append (de-duplication claim and
// chunk, group-committed) and drain (buffer chunks into the events table and its indexes), called
// directly with no HTTP, no JSON parsing and no validation. Whatever the HTTP figure of
// `npm run bench -- events.batch` is, it cannot exceed what this prints for the same database.
// The bare-table rows show what the events table's indexes cost on this machine's SQLite.
// Run: npm run bench:events-storage -- --events 200000    (figures: docs/events.md)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import BetterSqlite3 from 'better-sqlite3';
import { Command } from 'commander';
import pino from 'pino';
import type { BufferedEvent } from '../src/buffer/types.js';
import { loadConfig, type DatabaseConfig } from '../src/config.js';
import { createContext } from '../src/app/context.js';
import { insertEvents } from '../src/features/events/store.js';
import { createWorkspace } from '../src/features/workspaces/service.js';
import { newId } from '../src/lib/ids.js';
import { BATCH, batchOf, CONCURRENCY, measureAppend, measureDrain, UNITS } from './lib/drain-rate.js';
import { scratchPostgres } from './lib/scratch-postgres.js';

const silent = pino({ level: 'silent' });

interface Options {
  events: string;
  drainBatch: string;
}

async function measurePipeline(database: DatabaseConfig, dataDir: string, total: number, drainBatch: number): Promise<void> {
  // Appending all before draining any would pass the 429 limit: here it only gets in the way.
  const config = loadConfig({ VERDICT_DATA_DIR: dataDir, VERDICT_BUFFER_MAX_PENDING: String(total + BATCH * CONCURRENCY) }, { database, logLevel: 'silent' });
  const ctx = await createContext(config, silent, { migrate: true });
  try {
    const { workspace } = await createWorkspace(ctx, `Bench ${newId()}`);
    const append = await measureAppend(ctx, workspace.id, total);
    const drain = await measureDrain(ctx, total, drainBatch, insertEvents, async () => {
      const stored = await ctx.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(stored.n);
    });
    // On SQLite both take its one write lock in turn, so together they share it: 1 / (1/a + 1/d).
    // PostgreSQL can run them at once on other cores; the slower of the two then sets the pace.
    const together = database.kind === 'sqlite' ? 1 / (1 / append + 1 / drain) : Math.min(append, drain);
    const how = database.kind === 'sqlite' ? 'both, taking turns' : 'both, at best     ';
    const figure = (n: number) => Math.round(n).toLocaleString('en').padStart(8);
    console.log(`${database.kind.padEnd(9)} append ${figure(append)} events/s   drain ${figure(drain)} events/s   ${how} ${figure(together)} events/s`);
  } finally {
    await ctx.close();
  }
}

/** A bare events table (the migrated columns, written out here) with some of its indexes: what each index costs per row. */
function measureBareTable(dataDir: string, total: number): void {
  const file = path.join(dataDir, 'bare.sqlite');
  const variants: Array<[string, string[]]> = [
    ['primary key only', []],
    ['+ client_event_id unique', ['CREATE UNIQUE INDEX cid ON events (workspace_id, client_event_id)']],
    [
      '+ per-unit metric index',
      ['CREATE UNIQUE INDEX cid ON events (workspace_id, client_event_id)', 'CREATE INDEX metric ON events (workspace_id, event_key, unit_id, occurred_at)'],
    ],
  ];
  const rows = Array.from({ length: total / BATCH }, (_, b) => batchOf('01BENCHWORKSPACE0000000000', 'bare', b * BATCH));
  for (const [label, indexes] of variants) {
    fs.rmSync(file, { force: true });
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(
      'CREATE TABLE events (id text PRIMARY KEY, workspace_id text NOT NULL, unit_id text NOT NULL, event_key text NOT NULL, properties text NOT NULL, occurred_at bigint NOT NULL, received_at bigint NOT NULL, late integer NOT NULL, client_event_id text)',
    );
    for (const index of indexes) db.exec(index);
    const insert = db.prepare(
      'INSERT INTO events VALUES (@id, @workspace_id, @unit_id, @event_key, @properties, @occurred_at, @received_at, @late, @client_event_id)',
    );
    const insertMany = db.transaction((batches: BufferedEvent[][]) => batches.forEach((batch) => batch.forEach((row) => insert.run(row))));
    const started = performance.now();
    // 20 batches (10,000 rows) per transaction, as the drainer commits.
    for (let start = 0; start < rows.length; start += 20) insertMany(rows.slice(start, start + 20));
    const perSecond = total / ((performance.now() - started) / 1000);
    db.close();
    console.log(`bare events table, ${label.padEnd(26)} ${Math.round(perSecond).toLocaleString('en').padStart(8)} rows/s`);
  }
}

async function main(options: Options): Promise<void> {
  const total = Math.ceil(Number(options.events) / BATCH) * BATCH;
  const drainBatch = Number(options.drainBatch);
  if (!Number.isFinite(total) || total <= 0 || !Number.isInteger(drainBatch) || drainBatch < BATCH) {
    throw new Error('--events must be a positive number and --drain-batch a whole number of at least 500');
  }
  console.log(
    `Event storage without HTTP: ${total.toLocaleString('en')} events in batches of ${BATCH} (${CONCURRENCY} in flight), ${UNITS} units, drain batches of ${drainBatch.toLocaleString('en')}.`,
  );
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-bench-storage-'));
  try {
    await measurePipeline({ kind: 'sqlite', file: path.join(dataDir, 'verdict.sqlite') }, dataDir, total, drainBatch);
    const baseUrl = process.env.VERDICT_DATABASE_URL;
    if (baseUrl?.startsWith('postgres')) {
      const scratch = await scratchPostgres(baseUrl, 'storage');
      try {
        await measurePipeline({ kind: 'postgres', url: scratch.url }, dataDir, total, drainBatch);
      } finally {
        await scratch.drop();
      }
    }
    measureBareTable(dataDir, total);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await new Command()
  .name('bench:events-storage')
  .description('Events per second that the buffer append and the drain sustain without HTTP, and what the events indexes cost.')
  .option('-e, --events <n>', 'events to append and drain', '200000')
  .option('--drain-batch <n>', 'most events per drain transaction (VERDICT_BUFFER_DRAIN_BATCH)', '10000')
  .action(main)
  .parseAsync(process.argv);

import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { EventBuffer } from '../buffer/types.js';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/time.js';
import { JOB_LANES, listRunningExperimentSnapshots, loadSnapshotDocuments, readJobFigures, type JobFigures } from './store.js';

/**
 * How long a scrape waits for the database or the buffer store. Prometheus gives up after 10 s
 * by default; a dead database must cost a scrape this much at most, not hang it.
 */
export const SCRAPE_READ_TIMEOUT_MS = 2_000;
const SNAPSHOT_BATCH = 200;

/**
 * One read shared by every gauge of a scrape: prom-client calls each gauge's collect() in the
 * same tick, so the first starts the read and the others join it. A read still running when the
 * next scrape comes is joined rather than repeated, so a hung database gets one query, not a pile.
 */
class SharedRead<T> {
  #inFlight: Promise<T> | null = null;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly timeoutMs: number,
  ) {}

  /** The value, or null when the read failed or outlasted the timeout. */
  async get(): Promise<T | null> {
    this.#inFlight ??= this.read().finally(() => {
      this.#inFlight = null;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.timeoutMs);
    });
    try {
      return await Promise.race([this.#inFlight, timeout]);
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}

interface ExperimentFigures {
  running: number;
  srmWarnings: number;
}

/**
 * Counts running experiments whose latest snapshot warns of a sample ratio mismatch. Snapshots
 * are never updated, so each one's warning is parsed once and remembered by id; a scrape then
 * costs one small query plus the documents of snapshots computed since the last one.
 */
class SrmWatch {
  #warnings = new Map<string, boolean>();

  constructor(private readonly db: Db) {}

  async read(): Promise<ExperimentFigures> {
    const running = await listRunningExperimentSnapshots(this.db);
    const latest = running.map((row) => row.snapshot_id).filter((id): id is string => id !== null);
    const unknown = latest.filter((id) => !this.#warnings.has(id));
    const known = new Map<string, boolean>();
    for (const id of latest) if (this.#warnings.has(id)) known.set(id, this.#warnings.get(id) === true);
    for (let start = 0; start < unknown.length; start += SNAPSHOT_BATCH) {
      for (const row of await loadSnapshotDocuments(this.db, unknown.slice(start, start + SNAPSHOT_BATCH))) {
        known.set(row.id, (JSON.parse(row.document) as { srm_warning?: unknown }).srm_warning === true);
      }
    }
    // Only the latest snapshots of running experiments are kept, so the map never grows past them.
    this.#warnings = known;
    return { running: running.length, srmWarnings: latest.filter((id) => known.get(id)).length };
  }
}

export interface ScrapeSources {
  db: Db;
  buffer: EventBuffer;
  clock: Clock;
  logger: Logger;
  maxPending: number;
  timeoutMs?: number;
}

type Aggregator = 'max' | 'min';

/** The job queue's gauges: name, help, and the figure each reads from one scrape's job figures. */
const JOB_GAUGES: Array<[string, string, (jobs: JobFigures, now: number) => number]> = [
  ['verdict_job_queue_depth', 'Queued jobs that are due and wait for a worker', (j) => j.due],
  [
    'verdict_job_oldest_due_age_seconds',
    'How long the oldest due job has waited past its run time (0 when none is due)',
    (j, now) => (j.oldestDueRunAt === null ? 0 : Math.max(0, now - j.oldestDueRunAt) / 1000),
  ],
  ['verdict_jobs_running', 'Jobs a worker holds right now', (j) => j.running],
  ['verdict_jobs_retrying', 'Jobs queued again after a failed attempt', (j) => j.retrying],
  ['verdict_jobs_failed', 'Jobs that used up their attempts (kept until the retention purge)', (j) => j.failed],
];

/**
 * Gauges read from the database and the buffer store when /metrics is scraped. Every process of
 * a cluster reads the same database, so across processes they aggregate by max, not by sum.
 */
export function registerScrapeGauges(registry: Registry, sources: ScrapeSources): void {
  const timeoutMs = sources.timeoutMs ?? SCRAPE_READ_TIMEOUT_MS;
  const srm = new SrmWatch(sources.db);
  const database = new SharedRead(
    async () => ({ jobs: await readJobFigures(sources.db, sources.clock.now()), experiments: await srm.read(), at: sources.clock.now() }),
    timeoutMs,
  );
  const buffer = new SharedRead(async () => (await sources.buffer.status()).pending, timeoutMs);
  const registers = [registry];

  const gauge = <T>(name: string, help: string, read: SharedRead<T>, pick: (value: T) => number, aggregator: Aggregator = 'max') =>
    new Gauge({
      name,
      help,
      registers,
      aggregator,
      async collect() {
        // A failed read keeps the last value; verdict_metrics_source_up says it is stale.
        const value = await read.get();
        if (value !== null) this.set(pick(value));
      },
    });

  for (const [name, help, pick] of JOB_GAUGES) {
    new Gauge({
      name,
      help: `${help}, per lane (general: analyses, renders, mirroring, maintenance; outbound: webhook deliveries)`,
      labelNames: ['lane'],
      registers,
      aggregator: 'max',
      async collect() {
        const value = await database.get();
        if (value === null) return;
        for (const lane of JOB_LANES) this.set({ lane }, pick(value.jobs[lane], value.at));
      },
    });
  }
  gauge('verdict_buffer_pending_events', 'Acknowledged events waiting in the event buffer for the database', buffer, (pending) => pending);
  new Gauge({
    name: 'verdict_buffer_max_pending_events',
    help: 'Pending events above which ingest answers 429 (VERDICT_BUFFER_MAX_PENDING)',
    registers,
    aggregator: 'max',
  }).set(sources.maxPending);
  gauge('verdict_experiments_running', 'Running experiments in all workspaces', database, (value) => value.experiments.running);
  gauge(
    'verdict_experiments_srm_warning',
    'Running experiments whose latest snapshot has srm_warning (the split does not match the weights)',
    database,
    (value) => value.experiments.srmWarnings,
  );

  registerSourceUp(registry, { database, buffer }, sources.logger);
}

/** Whether each source could be read this scrape; logged when a source goes down, not on every scrape. */
function registerSourceUp(registry: Registry, reads: Record<string, SharedRead<unknown>>, logger: Logger): void {
  const failing = new Set<string>();
  new Gauge({
    name: 'verdict_metrics_source_up',
    help: 'Whether this scrape could read the source (1) or kept the last values because it failed or took longer than 2 s (0)',
    labelNames: ['source'],
    registers: [registry],
    aggregator: 'min',
    async collect() {
      // Both reads start in this tick, so they join the ones the other gauges started.
      const results = await Promise.all(Object.entries(reads).map(async ([source, read]) => [source, (await read.get()) !== null] as const));
      for (const [source, up] of results) {
        this.set({ source }, up ? 1 : 0);
        if (!up && !failing.has(source)) logger.warn({ source }, 'metrics could not read their source; its gauges keep their last values');
        if (up) failing.delete(source);
        else failing.add(source);
      }
    },
  });
}

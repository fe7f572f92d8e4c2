/** The application context's shape (the composition root, app/, builds it). */
import type { Logger } from 'pino';
import type { EventBuffer, EventStorage } from './buffer/types.js';
import type { Config } from './config.js';
import type { ClickHouse } from './clickhouse/client.js';
import type { Db, Executor } from './db/database.js';
import type { DialectSeam } from './db/dialect.js';
import type { ReadPool } from './db/read-pool.js';
import type { SideReads } from './db/side-reads.js';
import type { BackgroundWrites } from './db/background-writes.js';
import type { WriteRunner } from './db/write-tasks.js';
import type { EnqueueOptions } from './jobs/queue.js';
import type { JobRegistry } from './jobs/registry.js';
import type { ChangeFeed } from './lib/change-feed.js';
import type { SecretBox } from './lib/secrets.js';
import type { Clock } from './lib/time.js';
import type { AppMetrics } from './observability/metrics.js';

/**
 * Everything a request handler, job or command needs, built once per process by the composition
 * root (app/context.ts) and passed down. The services a slice owns join it from that slice's
 * deps.ts (module augmentation: api-keys adds the authenticator, analysis the statistics runner
 * and the analysis store), so this module imports no slice.
 */
export interface AppContext {
  config: Config;
  db: Db;
  seam: DialectSeam;
  /** Where the analysis's long reads run: SQLite worker threads, or PostgreSQL with a larger work_mem. */
  reads: ReadPool;
  /** Hot-path single-row reads that never queue behind the API's own SQLite connection. */
  sideReads: SideReads;
  logger: Logger;
  clock: Clock;
  secrets: SecretBox;
  /** Committed changes that in-process caches listen to. */
  changes: ChangeFeed;
  jobs: JobRegistry;
  /** Where events are stored and analysed when VERDICT_CLICKHOUSE_URL is set; null keeps them in the primary database. */
  clickhouse: ClickHouse | null;
  /** Where drained events are kept: the events table, or ClickHouse's (features/events/storage.ts). */
  eventStorage: EventStorage;
  /** Holds acknowledged events until the drainer stores them (embedded table or Redis). */
  buffer: EventBuffer;
  /** Where write transactions on a hot path run (first assignments): the buffer's writer thread on SQLite, see db/write-tasks.ts. */
  writes: WriteRunner;
  /** Where the analysis's long background writes take turns, resting between pieces (db/background-writes.ts). */
  background: BackgroundWrites;
  /** This app's Prometheus figures (GET /metrics), in a registry of its own. */
  metrics: AppMetrics;
  /** Enqueues inside the caller's transaction and nudges a local worker once it commits. */
  enqueue(executor: Executor, options: EnqueueOptions): Promise<string | null>;
  /** Set when this process runs workers, so new jobs start without waiting for a poll. */
  onJobEnqueued: (() => void) | null;
  close(): Promise<void>;
  /** What `close` does, step by step and named, for a shutdown that reports what it still waits for. */
  closeSteps(): Array<{ name: string; run: () => Promise<void> }>;
}

/** The API thread's checkpoint threshold beside a writer thread, in WAL pages (SQLite's default: 1,000). */
export const API_THREAD_CHECKPOINT_PAGES = 10_000;

export interface ContextOptions {
  migrate?: boolean;
  clock?: Clock;
  /** Join the cross-process cache-change relay (scaled mode); one-shot commands need not. */
  relay?: boolean;
  /** The rest after each background write piece, as a share of its time (db/background-writes.ts); a one-shot command gives 0. */
  backgroundRest?: number;
}

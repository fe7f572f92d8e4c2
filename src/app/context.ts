/**
 * The composition root's context: opens the databases, the event buffer and ClickHouse, and builds
 * the services slices own (the authenticator, the statistics runner, the analysis store, where
 * drained events are kept), each chosen once here.
 */
import cluster from 'node:cluster';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { createEventBuffer, createWriterThread } from '../buffer/index.js';
import type { EventBuffer } from '../buffer/types.js';
import type { ThreadBufferWriter } from '../buffer/thread-writer.js';
import type { Config } from '../config.js';
import type { ClickHouse } from '../clickhouse/client.js';
import { openClickHouseFor } from '../clickhouse/schema.js';
import { migrateToLatest, openDatabase, warnOfConnectionLoss, type Db } from '../db/database.js';
import { BackgroundWrites, SERVING_REST_RATIO } from '../db/background-writes.js';
import { inlineWrites } from '../db/write-tasks.js';
import { Authenticator } from '../features/api-keys/authenticator.js';
import { statsRunnerFor } from '../features/analysis/compute/thread/stats-thread.js';
import { createAnalysisStore } from '../features/analysis/store/create.js';
import { createEventStorage } from '../features/events/storage.js';
import { enqueueJob } from '../jobs/queue.js';
import { JobRegistry } from '../jobs/registry.js';
import { ChangeFeed } from '../lib/change-feed.js';
import { joinClusterRelay } from '../lib/cluster-change-relay.js';
import { RedisChangeRelay } from '../lib/redis-change-relay.js';
import { loadSecretBox } from '../lib/secrets.js';
import { systemClock } from '../lib/time.js';
import { AppMetrics } from '../observability/metrics.js';
import { registerScrapeGauges } from '../observability/scrape-gauges.js';

import { API_THREAD_CHECKPOINT_PAGES, type AppContext, type ContextOptions } from '../context.js';
import { WRITER_THREAD_ENTRY } from './writer-tasks.js';

function logMigrated(logger: Logger, message: string, applied: readonly string[]): void {
  if (applied.length > 0) logger.info({ applied }, message);
}

/**
 * In scaled mode caches on every process hear of a change at once (Redis pub/sub between hosts,
 * or the cluster's IPC between the processes of one `serve`); otherwise within their TTL.
 */
function joinChangeRelay(config: Config, options: ContextOptions, changes: ChangeFeed, logger: Logger): RedisChangeRelay | null {
  const relay =
    config.buffer.kind === 'redis' && options.relay !== false ? new RedisChangeRelay(config.buffer.url, config.buffer.prefix, changes, logger) : null;
  if (!relay && cluster.isWorker && options.relay !== false) {
    joinClusterRelay(
      changes,
      (message) => process.send?.(message),
      (listener) => process.on('message', listener),
    );
  }
  return relay;
}

export async function createContext(config: Config, logger: Logger, options: ContextOptions = {}): Promise<AppContext> {
  const { db, seam, reads, sideReads, destroy } = openDatabase(config.database, config.analysis, warnOfConnectionLoss(logger));
  const secrets = loadSecretBox(config.secretKey, config.dataDir);
  if (options.migrate) logMigrated(logger, 'database migrated', (await migrateToLatest(db, secrets)).applied);
  const clickhouse = config.clickhouse ? await openClickHouseFor(config.clickhouse, logger, options.migrate === true) : null;
  const clock = options.clock ?? systemClock;
  const metrics = new AppMetrics();
  const authenticator = new Authenticator({
    cacheStats: metrics.cache('api_keys'),
    db,
    clock,
    cacheTtlMs: config.keyCacheTtlMs,
    usageFlushMs: config.keyUsageFlushMs,
    onFlushError: (error) => logger.warn({ err: error }, 'recording API key usage failed; will retry'),
    isUnavailable: (error) => seam.isUnavailable(error),
  });
  const changes = new ChangeFeed();
  changes.subscribe((change) => {
    if (change.topic === 'api_key') authenticator.invalidateKey(change.id);
  });
  const relay = joinChangeRelay(config, options, changes, logger);
  const writerThread = await openWriterThread(config, db, metrics, logger);
  const writes = writerThread ?? inlineWrites(db);
  const background = new BackgroundWrites(options.backgroundRest ?? SERVING_REST_RATIO);
  const context: AppContext = {
    config,
    db,
    seam,
    reads,
    stats: statsRunnerFor(config.analysis.threads),
    sideReads,
    logger,
    clock,
    secrets,
    authenticator,
    changes,
    jobs: new JobRegistry(),
    buffer: createEventBuffer(config, { db, seam, clock, logger }, writerThread),
    writes,
    background,
    clickhouse,
    eventStorage: createEventStorage(db, clickhouse),
    analysisStore: createAnalysisStore({ db, seam, reads, writes, background, clock, clickhouse }),
    metrics,
    onJobEnqueued: null,
    async enqueue(executor, enqueueOptions) {
      const id = await enqueueJob(executor, enqueueOptions, clock.now());
      // The nudge may run before the caller's transaction commits; the worker then simply
      // finds nothing and the regular poll picks the job up.
      if (id) setTimeout(() => context.onJobEnqueued?.(), 5).unref();
      return id;
    },
    async close() {
      for (const step of context.closeSteps()) await step.run();
    },
    closeSteps: () => closeSteps(relay, context.buffer, authenticator, destroy, clickhouse),
  };
  registerScrapeGauges(metrics.registry, { db, buffer: context.buffer, clock, logger, maxPending: config.events.maxPending });
  return context;
}

/** The SQLite buffer's writer thread (none on PostgreSQL or when turned off), its figures reported to `metrics`. */
async function openWriterThread(config: Config, db: Db, metrics: AppMetrics, logger: Logger): Promise<ThreadBufferWriter | null> {
  const writerThread = createWriterThread(config, logger, WRITER_THREAD_ENTRY);
  if (!writerThread) return null;
  writerThread.onStats((stats) => metrics.observeWriter(stats));
  // Checkpoints then run on the writer thread, not inside a commit of the API thread (see
  // writer-thread-main.ts). The thread starts at the first event or assignment; until then (an
  // admin-only process) the API thread still checkpoints, past a WAL ten times the usual size.
  await sql`pragma wal_autocheckpoint = ${sql.lit(API_THREAD_CHECKPOINT_PAGES)}`.execute(db);
  return writerThread;
}

/** What closing a context does, in order, each step named. */
function closeSteps(
  relay: RedisChangeRelay | null,
  buffer: EventBuffer,
  authenticator: Authenticator,
  destroy: () => Promise<void>,
  clickhouse: ClickHouse | null,
) {
  return [
    { name: 'the cache-change relay (Redis)', run: async () => relay?.close() },
    { name: 'the event buffer (events being committed)', run: () => buffer.close() },
    { name: "recording the API keys' last use", run: () => authenticator.close() },
    { name: 'the database connections', run: () => destroy() },
    ...(clickhouse ? [{ name: 'ClickHouse', run: () => clickhouse.close() }] : []),
  ];
}

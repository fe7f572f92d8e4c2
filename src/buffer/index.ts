import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { Clock } from '../lib/time.js';
import { EmbeddedEventBuffer } from './embedded.js';
import { RedisEventBuffer } from './redis.js';
import { bufferFileOf, moveBufferedRows } from './buffer-file.js';
import { ThreadBufferWriter } from './thread-writer.js';
import type { EventBuffer } from './types.js';

export { Drainer } from './drainer.js';
export * from './types.js';

export interface BufferDependencies {
  db: Db;
  seam: DialectSeam;
  clock: Clock;
  logger: Logger;
}

/**
 * The embedded buffer's writer threads, when it has them (a SQLite file, the threads not turned
 * off): the API's other acknowledged writes run there too (context.ts `writes`). The buffer's
 * tables are then in a file of their own, and in the main file otherwise; whatever the other
 * home still holds (an upgrade, the setting changed) is moved first, so no acknowledged event
 * and no de-duplication key is left behind.
 */
/** The buffer's writer threads where the configuration has them; `entry` is the threads' entry module, which holds the registry of tasks (app/writer-thread.js). */
export function createWriterThread(config: Config, logger: Logger, entry: URL): ThreadBufferWriter | null {
  const { database } = config;
  if (config.buffer.kind === 'redis' || database.kind !== 'sqlite' || database.file === ':memory:') return null;
  // The drain into ClickHouse runs where its client is, on the API's thread.
  const threaded = config.events.writerThread && config.clickhouse === null;
  const moved = moveBufferedRows(database.file, threaded ? 'buffer' : 'main');
  if (moved.chunks + moved.keys > 0) {
    const into = threaded ? bufferFileOf(database.file) : database.file;
    logger.info({ chunks: moved.chunks, keys: moved.keys, into }, 'moved the event buffer to where this configuration keeps it');
  }
  return threaded ? new ThreadBufferWriter(database.file, entry) : null;
}

/** The configured buffer: Redis when VERDICT_REDIS_URL is set, a table in the main database otherwise (written on `writerThread` if given). */
export function createEventBuffer(config: Config, deps: BufferDependencies, writerThread: ThreadBufferWriter | null = null): EventBuffer {
  const logger = deps.logger.child({ component: 'event-buffer' });
  if (config.buffer.kind === 'redis') {
    return new RedisEventBuffer({
      url: config.buffer.url,
      prefix: config.buffer.prefix,
      db: deps.db,
      logger,
      maxPending: config.events.maxPending,
      claimIdleMs: config.events.claimIdleMs,
    });
  }
  return new EmbeddedEventBuffer({
    db: deps.db,
    seam: deps.seam,
    clock: deps.clock,
    maxPending: config.events.maxPending,
    ...(writerThread ? { writer: writerThread } : {}),
  });
}

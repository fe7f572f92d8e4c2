import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { Clock } from '../lib/time.js';
import { EmbeddedEventBuffer } from './embedded.js';
import { RedisEventBuffer } from './redis.js';
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
 * The embedded buffer's writer thread, when it has one (a SQLite file, the thread not turned off):
 * the API's other acknowledged writes run there too (context.ts `writes`).
 */
export function createWriterThread(config: Config, db: Db): ThreadBufferWriter | null {
  const { database } = config;
  if (config.buffer.kind === 'redis' || !config.events.writerThread || database.kind !== 'sqlite' || database.file === ':memory:') return null;
  // The drain into ClickHouse runs where its client is, on this thread (with the writes beside it).
  if (config.clickhouse !== null) return null;
  return new ThreadBufferWriter(database.file, db);
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

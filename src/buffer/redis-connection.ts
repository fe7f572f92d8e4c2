import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BufferUnavailableError } from './types.js';

/** How long one connection attempt or one command may take before the caller gets a 503. */
const CONNECT_TIMEOUT_MS = 2_000;
const COMMAND_TIMEOUT_MS = 2_000;

/**
 * A client that fails fast: with no offline queue a command sent while Redis is down is
 * rejected at once (the request answers 503 instead of hanging), while the client keeps
 * reconnecting in the background so service resumes by itself when Redis is back.
 */
export function createRedisClient(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // A command in flight when the connection drops fails rather than being re-sent: the
    // caller then retries through the API, where de-duplication makes the retry safe.
    autoResendUnfulfilledCommands: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err: error }, 'the Redis event buffer is unreachable; events answer 503 until it is back');
  });
  redis.on('ready', () => {
    if (down) logger.info('the Redis event buffer is reachable again');
    down = false;
  });
  return redis;
}

/**
 * Acknowledged events live in Redis until drained, so Redis must persist them: without AOF a
 * Redis restart loses acknowledged events. CONFIG may be disabled (managed Redis); then we can
 * only say so.
 */
export async function warnWithoutAof(redis: Redis, logger: Logger): Promise<void> {
  try {
    const reply = (await redis.call('CONFIG', 'GET', 'appendonly')) as string[];
    const value = reply[1];
    if (value === 'no') {
      logger.warn(
        'Redis runs without AOF (appendonly no): acknowledged events waiting in the buffer are lost if Redis restarts. ' +
          'Run Redis with appendonly yes (see docs/events.md).',
      );
    }
  } catch (error) {
    logger.info({ err: error }, 'could not read the Redis appendonly setting (CONFIG disabled?); make sure AOF is on');
  }
}

// Replies that mean "Redis cannot take this now" rather than "the command is wrong".
const UNAVAILABLE_REPLIES = /^(OOM|LOADING|READONLY|MASTERDOWN|BUSY|NOREPLICAS|CLUSTERDOWN|TRYAGAIN|MISCONF)\b/;

/** Connection failures, timeouts and busy/out-of-memory replies become BufferUnavailableError. */
export function asUnavailable(error: unknown): unknown {
  if (error instanceof BufferUnavailableError) return error;
  const isReply = error instanceof Error && error.name === 'ReplyError';
  if (isReply && !UNAVAILABLE_REPLIES.test(error.message)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new BufferUnavailableError(`the Redis event buffer cannot be reached (${reason})`, { cause: error });
}

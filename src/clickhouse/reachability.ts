/**
 * A ClickHouse server that is away when Verdict starts (docs/deployment.md "ClickHouse"). Ingest
 * never waits on ClickHouse, so neither does start-up: the process serves, events wait in the
 * buffer, and the migration is retried until the server answers; only then can the drain store
 * events and the analysis compute there. A query ClickHouse refused (bad credentials, a failing
 * statement) is not this: start-up still fails on it, saying why.
 */
import type { Logger } from 'pino';
import { SOCKET_ERROR_CODES } from '../lib/socket-errors.js';
import type { ClickHouse } from './client.js';

// ENOTFOUND too: a server name that does not resolve (yet) is away as well.
const NETWORK_CODES = new Set<string>([...SOCKET_ERROR_CODES, 'ENOTFOUND']);

/** Whether the error says the ClickHouse server could not be reached (not that it refused a query). */
export function isClickHouseUnreachable(error: unknown): boolean {
  for (let cause = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; cause && depth < 5; depth += 1) {
    if (typeof cause.code === 'string' && NETWORK_CODES.has(cause.code)) return true;
    if (typeof cause.message === 'string' && /socket hang up|Timeout error/i.test(cause.message)) return true;
    cause = cause.cause as typeof cause;
  }
  return false;
}

export interface RetryOptions {
  /** Waits between attempts, the last one repeated (milliseconds). */
  delaysMs?: readonly number[];
}

const DEFAULT_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * Runs `migrate` now; if ClickHouse cannot be reached, logs it and keeps trying in the background
 * (the returned `stop` ends the attempts). Any other failure is thrown, now or (later) logged.
 */
export async function migrateWhenReachable(
  clickhouse: ClickHouse,
  migrate: (clickhouse: ClickHouse) => Promise<string[]>,
  logger: Logger,
  options: RetryOptions = {},
): Promise<{ stop(): void }> {
  const delays = options.delaysMs ?? DEFAULT_DELAYS_MS;
  const logApplied = (applied: string[]) => applied.length > 0 && logger.info({ applied }, 'ClickHouse migrated');
  try {
    logApplied(await migrate(clickhouse));
    return { stop: () => undefined };
  } catch (error) {
    if (!isClickHouseUnreachable(error)) throw error;
    logger.error({ err: error }, 'ClickHouse cannot be reached: serving without it (events wait in the buffer, snapshots answer 503); retrying');
  }
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = (index: number) => {
    timer = setTimeout(
      () => {
        migrate(clickhouse).then(
          (applied) => {
            logApplied(applied);
            logger.info('ClickHouse is reachable again: the drain and the analysis use it');
          },
          (error: unknown) => {
            if (stopped) return;
            if (!isClickHouseUnreachable(error)) logger.error({ err: error }, 'migrating ClickHouse failed; retrying');
            attempt(index + 1);
          },
        );
      },
      delays[Math.min(index, delays.length - 1)],
    );
    timer.unref();
  };
  attempt(0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

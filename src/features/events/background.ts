import { Drainer } from '../../buffer/drainer.js';
import type { AppContext } from '../../context.js';

const HOUR_MS = 60 * 60 * 1000;

/** Registers the recurring purge of expired de-duplication keys. */
export function registerEventJobs(ctx: AppContext): void {
  ctx.jobs.register('events.purge_dedupe_keys', async (_payload, { logger }) => {
    const removed = await ctx.buffer.purgeExpiredKeys(ctx.clock.now());
    logger.info({ removed }, 'purged expired event de-duplication keys');
  });
  ctx.jobs.every('events.purge_dedupe_keys', HOUR_MS);
}

/** Starts moving buffered events into the events table (or ClickHouse's, when configured) on this process. */
export function startEventDrainer(ctx: AppContext): Drainer {
  const drainer = new Drainer({
    buffer: ctx.buffer,
    persist: ctx.eventStorage.persist,
    logger: ctx.logger.child({ component: 'event-drainer' }),
    batchSize: ctx.config.events.drainBatchSize,
    intervalMs: ctx.config.events.drainIntervalMs,
    onDrained: (events) => ctx.metrics.eventsDrained.inc(events),
  });
  drainer.start();
  return drainer;
}

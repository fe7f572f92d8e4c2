import type { Config } from '../config.js';
import { createContext } from '../app/context.js';
import type { AppContext } from '../context.js';
import { startEventDrainer } from '../features/events/background.js';
import { createSlices, type Slices } from '../features/index.js';
import { registerJobHandlers } from '../app/jobs.js';
import { Scheduler } from '../jobs/scheduler.js';
import { Worker } from '../jobs/worker.js';
import { createLogger } from '../logger.js';
import type { StopStage } from './shutdown.js';

/** What running jobs get to finish when the deadline allows (the worker's own default). */
const JOB_GRACE_MS = 10_000;

export interface Background {
  worker: Worker;
  scheduler: Scheduler;
  /**
   * Stopping it, as one stage of a shutdown: each part named for the deadline's log line. Running
   * jobs get half of the shutdown deadline (at most the worker's 10 s) to finish before they are
   * aborted and released, so that happens before the deadline.
   */
  stopStage(shutdownTimeoutMs: number): StopStage;
}

/** The context and the slices built from it once, for the job handlers and (serve) the HTTP app. */
export async function openRuntime(config: Config, migrate: boolean): Promise<{ ctx: AppContext; slices: Slices }> {
  const logger = createLogger(config.logLevel);
  const ctx = await createContext(config, logger, { migrate });
  const slices = createSlices(ctx);
  registerJobHandlers(ctx, slices);
  // Connects the event buffer now (Redis: checks AOF) rather than on the first request.
  await ctx.buffer.open();
  return { ctx, slices };
}

/** Starts the job worker, the recurring-job scheduler and the event drainer on this process. */
export function startBackground(ctx: AppContext): Background {
  const worker = new Worker({
    db: ctx.db,
    seam: ctx.seam,
    registry: ctx.jobs,
    logger: ctx.logger.child({ component: 'worker' }),
    clock: ctx.clock,
    ...ctx.config.jobs,
  });
  const scheduler = new Scheduler(ctx.db, ctx.jobs, ctx.clock, ctx.logger.child({ component: 'scheduler' }));
  ctx.onJobEnqueued = () => worker.wake();
  worker.start();
  scheduler.start();
  const drainer = startEventDrainer(ctx);
  return {
    worker,
    scheduler,
    stopStage(shutdownTimeoutMs) {
      ctx.onJobEnqueued = null;
      const graceMs = Math.min(JOB_GRACE_MS, Math.floor(shutdownTimeoutMs / 2));
      return [
        { name: 'the job scheduler', run: () => scheduler.stop() },
        { name: 'the job worker (jobs under way)', run: () => worker.stop(graceMs) },
        { name: 'the event drainer (its round under way)', run: () => drainer.stop() },
      ];
    },
  };
}

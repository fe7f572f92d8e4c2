import type { Config } from '../config.js';
import { createContext, type AppContext } from '../context.js';
import { startEventDrainer } from '../features/events/background.js';
import { createSlices, type Slices } from '../features/index.js';
import { registerJobHandlers } from '../jobs/handlers.js';
import { Scheduler } from '../jobs/scheduler.js';
import { Worker } from '../jobs/worker.js';
import { createLogger } from '../logger.js';

export interface Background {
  worker: Worker;
  scheduler: Scheduler;
  stop(): Promise<void>;
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
    async stop() {
      ctx.onJobEnqueued = null;
      await Promise.all([scheduler.stop(), worker.stop(), drainer.stop()]);
    },
  };
}

/** Runs `shutdown` once on SIGINT/SIGTERM, then exits. */
export function onSignals(shutdown: () => Promise<void>, logger: AppContext['logger']): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    shutdown()
      .then(() => process.exit(0))
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

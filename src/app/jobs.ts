import type { AppContext } from '../context.js';
import { registerAnalysisJobs } from '../features/analysis/jobs.js';
import { registerBanditJobs } from '../features/bandits/jobs.js';
import { reweightIfDue } from '../features/bandits/reweight.js';
import { registerEventJobs } from '../features/events/background.js';
import { registerRetentionJobs } from '../features/retention/jobs.js';
import { createSlices, type Slices } from '../features/index.js';
import { purgeFinishedJobs } from '../jobs/queue.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Finished jobs are kept a week for inspection, then removed. */
export const FINISHED_JOB_RETENTION_MS = 7 * DAY_MS;

/** The single place where every feature's background work is wired to the queue (the composition root's). */
export function registerJobHandlers(ctx: AppContext, slices: Slices = createSlices(ctx)): void {
  ctx.jobs.register('jobs.purge_finished', async (_payload, { logger }) => {
    const removed = await purgeFinishedJobs(ctx.db, ctx.clock.now() - FINISHED_JOB_RETENTION_MS);
    logger.info({ removed }, 'purged finished jobs');
  });
  ctx.jobs.every('jobs.purge_finished', 6 * 60 * 60 * 1000);
  registerEventJobs(ctx);
  slices.renders.registerJobs();
  slices.taskTool.registerJobs();
  slices.inbound.registerJobs();
  registerBanditJobs(ctx);
  registerRetentionJobs(ctx);
  slices.webhookEndpoints.registerJobs();
  registerAnalysisJobs(ctx, {
    onSnapshot: slices.alerts.onSnapshot,
    onFailed: slices.alerts.onAnalysisFailed,
    reweightIfDue: (row) => reweightIfDue(ctx, row),
  });
}

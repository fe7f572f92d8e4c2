import type { AppContext } from '../../context.js';
import { purgeExpiredEvents } from './purge.js';

export const RETENTION_PURGE_JOB = 'retention.purge_events';
const HOUR_MS = 60 * 60 * 1000;

/**
 * With VERDICT_EVENT_RETENTION_DAYS set, an hourly job purges expired events and exposures
 * (purge.ts); unset, nothing is registered and everything is kept.
 */
export function registerRetentionJobs(ctx: Pick<AppContext, 'config' | 'db' | 'clock' | 'jobs' | 'eventStorage'>): void {
  const retentionDays = ctx.config.eventRetentionDays;
  if (retentionDays === null) return;
  ctx.jobs.register(RETENTION_PURGE_JOB, async (_payload, { logger, signal }) => {
    const purged = await purgeExpiredEvents({ db: ctx.db, outside: ctx.eventStorage.outside, retentionDays, now: ctx.clock.now(), signal });
    logger.info({ retention_days: retentionDays, workspaces: purged }, 'purged expired events');
  });
  ctx.jobs.every(RETENTION_PURGE_JOB, HOUR_MS);
}

/**
 * The bandits' background work. A recurring `bandit.schedule` job (once a minute across all
 * processes) enqueues one `bandit.reweight` job per running bandit whose burn-in is over and whose
 * last period is at least `update_every_minutes` old, keyed `bandit:{id}:{floor(now / every)}` so
 * each update slot runs at most once however many schedulers run. A reweight that finds too few
 * units does nothing; the next slot tries again. A snapshot computed while an update is due
 * reweights first (reweightIfDue), and the slot's job then finds nothing due.
 */
import type { AppContext } from '../../context.js';
import { parseAllocation } from '../experiments/allocation.js';
import { listRunningBandits, type ExperimentRow } from '../experiments/read.js';
import type { BanditsDeps } from './deps.js';
import { reweight, updateDue } from './reweight.js';

export const BANDIT_SCHEDULE_JOB = 'bandit.schedule';
export const BANDIT_REWEIGHT_JOB = 'bandit.reweight';
export const SCHEDULE_EVERY_MS = 60_000;
const REWEIGHT_MAX_ATTEMPTS = 3;

/** The job key of the update slot due now, or null when the bandit is not due. */
export function dueSlot(row: ExperimentRow, now: number): string | null {
  const allocation = parseAllocation(row.allocation);
  if (allocation.type !== 'bandit' || !updateDue(row, allocation, now)) return null;
  return `bandit:${row.id}:${Math.floor(now / (allocation.update_every_minutes * 60_000))}`;
}

/** Enqueues the reweights that are due; returns their job keys (keys already queued are skipped). */
export async function enqueueDueReweights(ctx: Pick<AppContext, 'db' | 'clock' | 'enqueue'>, now = ctx.clock.now()): Promise<string[]> {
  const enqueued: string[] = [];
  for (const row of await listRunningBandits(ctx.db)) {
    const jobKey = dueSlot(row, now);
    if (!jobKey) continue;
    const id = await ctx.enqueue(ctx.db, {
      name: BANDIT_REWEIGHT_JOB,
      payload: { experiment_id: row.id },
      workspaceId: row.workspace_id,
      jobKey,
      maxAttempts: REWEIGHT_MAX_ATTEMPTS,
    });
    if (id) enqueued.push(jobKey);
  }
  return enqueued;
}

/** Wires the bandits into the job queue (called from app/jobs.ts). */
export function registerBanditJobs(ctx: AppContext & BanditsDeps): void {
  ctx.jobs.register(BANDIT_SCHEDULE_JOB, async (_payload, { logger }) => {
    const enqueued = await enqueueDueReweights(ctx);
    if (enqueued.length > 0) logger.info({ enqueued }, 'bandit reweights enqueued');
  });
  ctx.jobs.register(BANDIT_REWEIGHT_JOB, async (payload, { logger }) => {
    const experimentId = (payload as { experiment_id?: unknown } | null)?.experiment_id;
    if (typeof experimentId !== 'string') throw new Error(`${BANDIT_REWEIGHT_JOB} needs a payload {experiment_id}`);
    const outcome = await reweight(ctx, experimentId);
    logger.info({ experiment_id: experimentId, ...outcome }, outcome.kind === 'reweighted' ? 'bandit reweighted' : 'bandit reweight skipped');
  });
  ctx.jobs.every(BANDIT_SCHEDULE_JOB, SCHEDULE_EVERY_MS);
}

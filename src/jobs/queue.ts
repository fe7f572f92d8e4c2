import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { Database, JobLane, JobsTable } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import type { JobFailureHook } from './registry.js';

export type JobRow = Selectable<JobsTable>;

export interface EnqueueOptions {
  name: string;
  payload?: unknown;
  workspaceId?: string | null;
  /**
   * `outbound` for a job that waits on someone else's server (a webhook delivery): it runs in the
   * delivery pool, shared fairly between workspaces by `workspaceId`. Default `general`.
   */
  lane?: JobLane;
  runAt?: number;
  maxAttempts?: number;
  /** At most one job ever exists per key; a second enqueue with the same key is a no-op. */
  jobKey?: string;
}

export const DEFAULT_MAX_ATTEMPTS = 10;
const BACKOFF_BASE_MS = 1_000;
const BACKOFF_CAP_MS = 60 * 60 * 1_000;

/**
 * Enqueue with the executor of the change that causes the job, so both commit or neither does.
 * Returns the job id, or null when a job with the same key already exists.
 */
export async function enqueueJob(executor: Executor, options: EnqueueOptions, now: number): Promise<string | null> {
  // The outbound claim shares its pool by workspace: a job there must say whose it is.
  if (options.lane === 'outbound' && !options.workspaceId) throw new Error(`the outbound job "${options.name}" needs its workspace id`);
  const id = newId();
  const result = await executor
    .insertInto('jobs')
    .values({
      id,
      name: options.name,
      payload: JSON.stringify(options.payload ?? {}),
      workspace_id: options.workspaceId ?? null,
      lane: options.lane ?? 'general',
      status: 'queued',
      max_attempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      run_at: options.runAt ?? now,
      job_key: options.jobKey ?? null,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('job_key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0 ? id : null;
}

/** Capped exponential backoff with a little jitter, so retries of a burst do not line up. */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number {
  const exponential = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(attempts - 1, 0), BACKOFF_CAP_MS);
  return Math.round(exponential * (1 + 0.1 * random()));
}

/**
 * Claims up to `limit` due jobs of the general lane: queued ones whose time has come, and running
 * ones whose worker stopped renewing its lease (it died), oldest first. Concurrent claimers never
 * get the same job: PostgreSQL skips rows locked by another claim, SQLite serializes writers.
 * (The outbound lane claims fairly between workspaces: fair-claim.ts.)
 */
export async function claimJobs(db: Db, seam: DialectSeam, workerId: string, limit: number, leaseMs: number, now: number): Promise<JobRow[]> {
  return db.transaction().execute(async (trx) => {
    const due = await seam
      .skipLocked(trx.selectFrom('jobs').select('id').where('lane', '=', 'general').where(isDue(now)).orderBy('run_at').limit(limit))
      .execute();
    const ids = due.map((row) => row.id);
    return takeJobs(trx, ids, workerId, leaseMs, now);
  });
}

/** Due: queued and its time has come, or running under a lease that lapsed (its worker died). */
export function isDue(now: number) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) =>
    eb.or([eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', now)]), eb.and([eb('status', '=', 'running'), eb('locked_until', '<', now)])]);
}

/** Marks the jobs, locked or selected in the claiming transaction, as running under this worker's lease; counts the attempt. */
export async function takeJobs(trx: Executor, ids: readonly string[], workerId: string, leaseMs: number, now: number): Promise<JobRow[]> {
  if (ids.length === 0) return [];
  return trx
    .updateTable('jobs')
    .set((eb) => ({
      status: 'running' as const,
      locked_by: workerId,
      locked_until: now + leaseMs,
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    }))
    .where('id', 'in', ids)
    .returningAll()
    .execute();
}

/** Extends the lease; false means another worker took the job over (our lease had lapsed). */
export async function renewLease(db: Db, jobId: string, workerId: string, leaseMs: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ locked_until: now + leaseMs, updated_at: now })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function completeJob(db: Db, jobId: string, workerId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'succeeded', locked_by: null, locked_until: null, finished_at: now, updated_at: now })
    .where('id', '=', jobId)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Schedules a retry with backoff, or fails the job for good once its attempts are used up. A final
 * failure runs the job type's failure hook in the same transaction, so the record the job worked
 * on (a render) fails exactly when the job does. Nothing happens when the worker no longer holds
 * the job (its lease lapsed and another worker took it, or shutdown released it).
 */
export async function failJob(
  db: Db,
  job: JobRow,
  workerId: string,
  error: string,
  now: number,
  onFailed?: JobFailureHook,
): Promise<'retry' | 'failed' | 'lost'> {
  const finalAttempt = job.attempts >= job.max_attempts;
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('jobs')
      .set({
        status: finalAttempt ? 'failed' : 'queued',
        run_at: finalAttempt ? job.run_at : now + retryDelayMs(job.attempts),
        last_error: error.slice(0, 4_000),
        locked_by: null,
        locked_until: null,
        finished_at: finalAttempt ? now : null,
        updated_at: now,
      })
      .where('id', '=', job.id)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return 'lost';
    if (!finalAttempt) return 'retry';
    await onFailed?.(trx, { job, payload: parsePayload(job.payload), reason: error });
    return 'failed';
  });
}

/**
 * Puts jobs this worker claimed but will not finish (it is shutting down) back in the queue, due
 * now, without counting the attempt: the job did not fail, its worker stopped.
 */
export async function releaseJobs(db: Db, jobIds: readonly string[], workerId: string, now: number): Promise<number> {
  if (jobIds.length === 0) return 0;
  const result = await db
    .updateTable('jobs')
    .set((eb) => ({ status: 'queued' as const, attempts: eb('attempts', '-', 1), run_at: now, locked_by: null, locked_until: null, updated_at: now }))
    .where('id', 'in', jobIds)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

function parsePayload(payload: string): unknown {
  try {
    return JSON.parse(payload) as unknown;
  } catch {
    return null;
  }
}

export async function getJob(executor: Executor, jobId: string): Promise<JobRow | undefined> {
  return executor.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
}

/** Removes finished jobs older than the retention, keeping the table small. */
export async function purgeFinishedJobs(db: Db, olderThan: number): Promise<number> {
  const result = await db.deleteFrom('jobs').where('status', 'in', ['succeeded', 'failed']).where('finished_at', '<', olderThan).executeTakeFirst();
  return Number(result.numDeletedRows);
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { JobLane } from '../db/schema.js';

export interface JobFigures {
  /** Queued jobs whose time has come, waiting for a worker. */
  due: number;
  /** run_at of the oldest of them, or null when none is due. */
  oldestDueRunAt: number | null;
  running: number;
  /** Queued again after a failed attempt (backing off). */
  retrying: number;
  /** Used up their attempts; kept until the retention purge removes them. */
  failed: number;
}

/** The lanes the gauges report, always both (a lane with no jobs reads 0, not a missing series). */
export const JOB_LANES: readonly JobLane[] = ['general', 'outbound'];

const NO_JOBS: JobFigures = { due: 0, oldestDueRunAt: null, running: 0, retrying: 0, failed: 0 };

/**
 * One pass over the unfinished and failed jobs, per lane (the claim index on status, run_at serves
 * it): a backlog of webhook deliveries and one of analyses call for different remedies.
 */
export async function readJobFigures(db: Db, now: number): Promise<Record<JobLane, JobFigures>> {
  const due = sql<boolean>`status = 'queued' and run_at <= ${now}`;
  const rows = await db
    .selectFrom('jobs')
    .where('status', 'in', ['queued', 'running', 'failed'])
    .select([
      'lane',
      sql<number | string | null>`sum(case when ${due} then 1 else 0 end)`.as('due'),
      sql<number | string | null>`min(case when ${due} then run_at end)`.as('oldest_due_run_at'),
      sql<number | string | null>`sum(case when status = 'running' then 1 else 0 end)`.as('running'),
      sql<number | string | null>`sum(case when status = 'queued' and attempts > 0 then 1 else 0 end)`.as('retrying'),
      sql<number | string | null>`sum(case when status = 'failed' then 1 else 0 end)`.as('failed'),
    ])
    .groupBy('lane')
    .execute();
  // PostgreSQL returns sums of bigints as strings, and sums over no rows as NULL.
  const count = (value: number | string | null | undefined) => Number(value ?? 0);
  const figures: Record<JobLane, JobFigures> = { general: NO_JOBS, outbound: NO_JOBS };
  for (const row of rows) {
    figures[row.lane] = {
      due: count(row.due),
      oldestDueRunAt: row.oldest_due_run_at === null ? null : Number(row.oldest_due_run_at),
      running: count(row.running),
      retrying: count(row.retrying),
      failed: count(row.failed),
    };
  }
  return figures;
}

/** Each running experiment (of every workspace) with the id of its latest snapshot, if any. */
export async function listRunningExperimentSnapshots(db: Db): Promise<{ id: string; snapshot_id: string | null }[]> {
  return db
    .selectFrom('experiments as e')
    .where('e.status', '=', 'running')
    .select((eb) => [
      'e.id',
      eb
        .selectFrom('analysis_snapshots as s')
        .whereRef('s.experiment_id', '=', 'e.id')
        .select((inner) => inner.fn.max('s.id').as('latest'))
        .$asScalar()
        .as('snapshot_id'),
    ])
    .execute() as Promise<{ id: string; snapshot_id: string | null }[]>;
}

/** The documents of the given snapshots (JSON text). */
export async function loadSnapshotDocuments(db: Db, ids: string[]): Promise<{ id: string; document: string }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('analysis_snapshots').select(['id', 'document']).where('id', 'in', ids).execute();
}

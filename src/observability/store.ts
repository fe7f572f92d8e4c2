import { sql } from 'kysely';
import type { Db } from '../db/database.js';

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

/** One pass over the unfinished and failed jobs (the claim index on status, run_at serves it). */
export async function readJobFigures(db: Db, now: number): Promise<JobFigures> {
  const due = sql<boolean>`status = 'queued' and run_at <= ${now}`;
  const row = await db
    .selectFrom('jobs')
    .where('status', 'in', ['queued', 'running', 'failed'])
    .select([
      sql<number | string | null>`sum(case when ${due} then 1 else 0 end)`.as('due'),
      sql<number | string | null>`min(case when ${due} then run_at end)`.as('oldest_due_run_at'),
      sql<number | string | null>`sum(case when status = 'running' then 1 else 0 end)`.as('running'),
      sql<number | string | null>`sum(case when status = 'queued' and attempts > 0 then 1 else 0 end)`.as('retrying'),
      sql<number | string | null>`sum(case when status = 'failed' then 1 else 0 end)`.as('failed'),
    ])
    .executeTakeFirst();
  // PostgreSQL returns sums of bigints as strings, and sums over no rows as NULL.
  const count = (value: number | string | null | undefined) => Number(value ?? 0);
  return {
    due: count(row?.due),
    oldestDueRunAt: row?.oldest_due_run_at === null || row?.oldest_due_run_at === undefined ? null : Number(row.oldest_due_run_at),
    running: count(row?.running),
    retrying: count(row?.retrying),
    failed: count(row?.failed),
  };
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

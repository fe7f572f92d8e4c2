import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import { isDue, takeJobs, type JobRow } from './queue.js';

export interface OutboundClaim {
  workerId: string;
  /** Free slots of this worker's delivery pool. */
  limit: number;
  /** Outbound jobs of one workspace running at once, across every worker. */
  perWorkspace: number;
  leaseMs: number;
  now: number;
}

/** Outbound claims take turns across processes, so two of them cannot both fill a workspace's last slot. */
const CLAIM_LOCK = 'verdict.jobs.outbound-claim';

/**
 * Claims due jobs of the outbound lane fairly between workspaces: a workspace never has more than
 * `perWorkspace` of them running (on every worker together), and the workspaces with the fewest
 * running go first, each with its oldest job. So one workspace's backlog of slow deliveries holds
 * at most its share of the pool, and another workspace's delivery takes the next free slot ahead
 * of that backlog. Jobs whose worker died (lapsed lease) are due again, as in the general lane.
 */
export async function claimOutboundJobs(db: Db, seam: DialectSeam, claim: OutboundClaim): Promise<JobRow[]> {
  return db.transaction().execute(async (trx) => {
    await seam.lockUntilCommit(trx, CLAIM_LOCK);
    const candidates = await fairCandidates(trx, claim);
    if (candidates.length === 0) return [];
    // Locked with the due condition checked again, so a row another transaction changed meanwhile
    // (a lapsed lease just renewed) is left alone.
    const locked = await seam.skipLocked(trx.selectFrom('jobs').select('id').where('id', 'in', candidates).where(isDue(claim.now))).execute();
    const ids = locked.map((row) => row.id);
    return takeJobs(trx, ids, claim.workerId, claim.leaseMs, claim.now);
  });
}

/**
 * The due outbound jobs to claim, in order of their workspace's load once claimed: a job's rank in
 * its workspace's due jobs (oldest first) plus the workspace's running jobs, at most `perWorkspace`.
 * Jobs without a workspace share one group.
 */
async function fairCandidates(trx: Executor, { limit, perWorkspace, now }: OutboundClaim): Promise<string[]> {
  const tenant = sql`COALESCE(workspace_id, '')`;
  const { rows } = await sql<{ id: string }>`
    WITH busy AS (
      SELECT ${tenant} AS tenant, COUNT(*) AS running
      FROM jobs
      WHERE lane = 'outbound' AND status = 'running' AND locked_until >= ${now}
      GROUP BY ${tenant}
    ),
    ranked AS (
      SELECT id, run_at, ${tenant} AS tenant, ROW_NUMBER() OVER (PARTITION BY ${tenant} ORDER BY run_at, id) AS rank
      FROM jobs
      WHERE lane = 'outbound' AND ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND locked_until < ${now}))
    )
    SELECT ranked.id
    FROM ranked LEFT JOIN busy ON busy.tenant = ranked.tenant
    WHERE ranked.rank + COALESCE(busy.running, 0) <= ${perWorkspace}
    ORDER BY ranked.rank + COALESCE(busy.running, 0), ranked.run_at, ranked.id
    LIMIT ${limit}`.execute(trx);
  return rows.map((row) => row.id);
}

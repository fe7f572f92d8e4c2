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

/** A workspace with due outbound jobs: how many it has running, its oldest due job's time, and due jobs to claim. */
interface Tenant {
  workspaceId: string;
  load: number;
  head: number;
  due: Array<{ id: string; runAt: number }>;
}

/**
 * Claims due jobs of the outbound lane fairly between workspaces: a workspace never has more than
 * `perWorkspace` of them running (on every worker together), and each free slot goes to the
 * workspace with the fewest running, its oldest due job first. So one workspace's backlog of slow
 * deliveries holds at most its share of the pool, and another workspace's delivery takes the next
 * free slot ahead of that backlog. Jobs whose worker died (lapsed lease) are due again, as in the
 * general lane. The cost grows with the workspaces and the free slots, not with the backlog: the
 * workspaces with queued jobs are found by skipping through the claim index, one seek each.
 */
export async function claimOutboundJobs(db: Db, seam: DialectSeam, claim: OutboundClaim): Promise<JobRow[]> {
  return db.transaction().execute(async (trx) => {
    await seam.lockUntilCommit(trx, CLAIM_LOCK);
    const tenants = await dueTenants(trx, claim);
    const candidates = allocate(tenants, claim);
    if (candidates.length === 0) return [];
    // Locked with the due condition checked again, so a row another transaction changed meanwhile
    // (a lapsed lease just renewed) is left alone.
    const locked = await seam.skipLocked(trx.selectFrom('jobs').select('id').where('id', 'in', candidates).where(isDue(claim.now))).execute();
    const ids = locked.map((row) => row.id);
    return takeJobs(trx, ids, claim.workerId, claim.leaseMs, claim.now);
  });
}

/**
 * The workspaces below their share with due outbound jobs, the first `limit` of them by load, then
 * by their oldest due job (only those can get a slot), each with the due jobs it could take.
 */
async function dueTenants(trx: Executor, { limit, perWorkspace, now }: OutboundClaim): Promise<Tenant[]> {
  const tenants = new Map<string, Tenant>();
  const tenant = (workspaceId: string): Tenant => {
    const entry = tenants.get(workspaceId) ?? { workspaceId, load: 0, head: Infinity, due: [] };
    tenants.set(workspaceId, entry);
    return entry;
  };
  // The running rows are few: at most the workers' pools, plus those of workers that died.
  const running = await trx
    .selectFrom('jobs')
    .select(['id', 'workspace_id', 'run_at', 'locked_until'])
    .where('lane', '=', 'outbound')
    .where('status', '=', 'running')
    .execute();
  for (const job of running) {
    const entry = tenant(job.workspace_id ?? '');
    if ((job.locked_until ?? 0) >= now) entry.load += 1;
    else {
      entry.due.push({ id: job.id, runAt: job.run_at });
      entry.head = Math.min(entry.head, job.run_at);
    }
  }
  for (const { workspaceId, head } of await queuedHeads(trx)) if (head <= now) tenant(workspaceId).head = Math.min(tenant(workspaceId).head, head);
  const first = [...tenants.values()]
    .filter((entry) => entry.head <= now && entry.load < perWorkspace)
    .sort((a, b) => a.load - b.load || a.head - b.head)
    .slice(0, limit);
  for (const entry of first) {
    entry.due.push(...(await oldestQueued(trx, entry.workspaceId, Math.min(perWorkspace - entry.load, limit), now)));
    entry.due.sort((a, b) => a.runAt - b.runAt || a.id.localeCompare(b.id));
  }
  return first;
}

/**
 * Each workspace with queued outbound jobs and the time of its oldest: a loose index scan (each
 * step seeks the next workspace in the claim index), so a deep backlog costs no more than a short one.
 */
async function queuedHeads(trx: Executor): Promise<Array<{ workspaceId: string; head: number }>> {
  const { rows } = await sql<{ workspace_id: string; head: number }>`
    WITH RECURSIVE tenants(workspace_id) AS (
      SELECT MIN(workspace_id) FROM jobs WHERE lane = 'outbound' AND status = 'queued'
      UNION ALL
      SELECT (SELECT MIN(j.workspace_id) FROM jobs j WHERE j.lane = 'outbound' AND j.status = 'queued' AND j.workspace_id > t.workspace_id)
      FROM tenants t
      WHERE t.workspace_id IS NOT NULL
    )
    SELECT t.workspace_id, (SELECT MIN(j.run_at) FROM jobs j WHERE j.lane = 'outbound' AND j.status = 'queued' AND j.workspace_id = t.workspace_id) AS head
    FROM tenants t
    WHERE t.workspace_id IS NOT NULL`.execute(trx);
  return rows.map((row) => ({ workspaceId: row.workspace_id, head: row.head }));
}

async function oldestQueued(trx: Executor, workspaceId: string, count: number, now: number): Promise<Array<{ id: string; runAt: number }>> {
  const rows = await trx
    .selectFrom('jobs')
    .select(['id', 'run_at'])
    .where('lane', '=', 'outbound')
    .where('status', '=', 'queued')
    .where('workspace_id', '=', workspaceId)
    .where('run_at', '<=', now)
    .orderBy('run_at')
    .orderBy('id')
    .limit(count)
    .execute();
  return rows.map((row) => ({ id: row.id, runAt: row.run_at }));
}

/**
 * Hands out the free slots one at a time, each to the workspace with the fewest running or already
 * handed (ties: the older due job), while it has due jobs and is below its share.
 */
function allocate(tenants: Tenant[], { limit, perWorkspace }: OutboundClaim): string[] {
  const handed = new Map<Tenant, number>(tenants.map((entry) => [entry, 0]));
  const loadOf = (entry: Tenant) => entry.load + handed.get(entry)!;
  const nextDue = (entry: Tenant) => entry.due[handed.get(entry)!];
  const taken: string[] = [];
  while (taken.length < limit) {
    const open = tenants.filter((entry) => nextDue(entry) && loadOf(entry) < perWorkspace);
    if (open.length === 0) break;
    const best = open.reduce((a, b) => (loadOf(b) < loadOf(a) || (loadOf(b) === loadOf(a) && nextDue(b)!.runAt < nextDue(a)!.runAt) ? b : a));
    taken.push(nextDue(best)!.id);
    handed.set(best, handed.get(best)! + 1);
  }
  return taken;
}

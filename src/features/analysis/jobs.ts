/**
 * Background analysis. A recurring `analysis.schedule` job (one per minute across all processes,
 * through the scheduler's unique job keys) looks for experiments that are due and enqueues one
 * `analysis.compute` job each:
 * - running experiments whose latest snapshot is at least `snapshot_cadence_minutes` old (or
 *   that have none), keyed `analysis:{id}:{floor(now / cadence)}`, so each cadence period runs at
 *   most once however many schedulers run;
 * - experiments stopped (or archived while running) in the last week that have no snapshot
 *   computed at or after the stop, keyed `analysis:{id}:final`: the final snapshot, once.
 */
import type { AppContext } from '../../context.js';
import type { SnapshotTrigger } from '../../db/tables/analysis.js';
import { parseDecisionRule } from '../experiments/read.js';
import type { AnalysisFailureListener, SnapshotListener } from './read.js';
import type { AnalysisDeps } from './index.js';
import { computeById } from './service.js';
import { listAnalysisCandidates, type AnalysisCandidate } from './snapshot-store.js';

export const ANALYSIS_COMPUTE_JOB = 'analysis.compute';
export const ANALYSIS_SCHEDULE_JOB = 'analysis.schedule';
export const SCHEDULE_EVERY_MS = 60_000;
/** How long after a stop the scheduler still looks for a missing final snapshot. */
export const FINAL_SNAPSHOT_HORIZON_MS = 7 * 24 * 60 * 60 * 1000;
const COMPUTE_MAX_ATTEMPTS = 5;

export interface ComputePayload {
  experiment_id: string;
  trigger: SnapshotTrigger;
}

export function cadenceMsOf(decisionRuleJson: string): number {
  return parseDecisionRule(decisionRuleJson).snapshot_cadence_minutes * 60_000;
}

export function cadenceJobKey(experimentId: string, now: number, cadenceMs: number): string {
  return `analysis:${experimentId}:${Math.floor(now / cadenceMs)}`;
}

export function finalJobKey(experimentId: string): string {
  return `analysis:${experimentId}:final`;
}

/** The job to enqueue for a candidate now, or null when it is not due. */
function dueJob(candidate: AnalysisCandidate, now: number): { jobKey: string; trigger: SnapshotTrigger } | null {
  const latest = candidate.latest_computed_at;
  if (candidate.status === 'running') {
    const cadenceMs = cadenceMsOf(candidate.decision_rule);
    if (latest !== null && now - latest < cadenceMs) return null;
    return { jobKey: cadenceJobKey(candidate.id, now, cadenceMs), trigger: 'schedule' };
  }
  if (candidate.stopped_at === null || (latest !== null && latest >= candidate.stopped_at)) return null;
  return { jobKey: finalJobKey(candidate.id), trigger: 'final' };
}

/** Enqueues the analyses that are due; returns the job keys it enqueued (existing keys are skipped). */
export async function enqueueDueAnalyses(ctx: AppContext, now = ctx.clock.now()): Promise<string[]> {
  const candidates = await listAnalysisCandidates(ctx.db, now - FINAL_SNAPSHOT_HORIZON_MS);
  const enqueued: string[] = [];
  for (const candidate of candidates) {
    const due = dueJob(candidate, now);
    if (!due) continue;
    const payload: ComputePayload = { experiment_id: candidate.id, trigger: due.trigger };
    const id = await ctx.enqueue(ctx.db, {
      name: ANALYSIS_COMPUTE_JOB,
      payload,
      workspaceId: candidate.workspace_id,
      jobKey: due.jobKey,
      maxAttempts: COMPUTE_MAX_ATTEMPTS,
    });
    if (id) enqueued.push(due.jobKey);
  }
  return enqueued;
}

function computePayloadOf(payload: unknown): ComputePayload {
  const given = (typeof payload === 'object' && payload !== null ? payload : {}) as Partial<ComputePayload>;
  if (typeof given.experiment_id !== 'string') throw new Error(`${ANALYSIS_COMPUTE_JOB} needs a payload {experiment_id, trigger}`);
  const trigger = given.trigger === 'final' || given.trigger === 'cli' || given.trigger === 'api' ? given.trigger : 'schedule';
  return { experiment_id: given.experiment_id, trigger };
}

export interface AnalysisListeners {
  onSnapshot?: SnapshotListener | undefined;
  onFailed?: AnalysisFailureListener | undefined;
  reweightIfDue?: AnalysisDeps['reweightIfDue'];
}

/** Wires the analysis into the job queue (called from app/jobs.ts, with the alerts slice's listeners). */
export function registerAnalysisJobs(context: AppContext, listeners: AnalysisListeners = {}): void {
  const ctx = { ...context, onSnapshot: listeners.onSnapshot, reweightIfDue: listeners.reweightIfDue };
  ctx.jobs.register(ANALYSIS_SCHEDULE_JOB, async (_payload, { logger }) => {
    const enqueued = await enqueueDueAnalyses(ctx);
    if (enqueued.length > 0) logger.info({ enqueued }, 'analysis snapshots enqueued');
  });
  ctx.jobs.register(
    ANALYSIS_COMPUTE_JOB,
    async (payload, { logger }) => {
      const { experiment_id: experimentId, trigger } = computePayloadOf(payload);
      const snapshot = await computeById(ctx, experimentId, { trigger });
      if (snapshot) logger.info({ experiment_id: experimentId, snapshot_id: snapshot.id, verdict: snapshot.decision.verdict }, 'analysis snapshot computed');
      else logger.warn({ experiment_id: experimentId }, 'analysis skipped: the experiment is gone or never started');
    },
    {
      onFailed: async (trx, failure) => {
        const given = failure.payload as Partial<ComputePayload> | null;
        if (listeners.onFailed && typeof given?.experiment_id === 'string')
          await listeners.onFailed(trx, { experimentId: given.experiment_id, reason: failure.reason });
      },
    },
  );
  ctx.jobs.every(ANALYSIS_SCHEDULE_JOB, SCHEDULE_EVERY_MS);
}

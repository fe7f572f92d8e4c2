// The alerts slice decides what to send: it hears of every stored snapshot and every lifecycle
// move, in the transaction that makes it, and publishes an event when a condition becomes true
// (again only after it cleared), and stops an experiment whose auto-stop condition a snapshot
// meets. Conditions are kept per experiment in alert_states, so ten snapshots that see the same
// SRM send one alert, and the eleventh that sees it cleared sends srm_cleared.
import type { Executor, Tx } from '../../db/database.js';
import type { AnalysisSnapshot } from '../analysis/read.js';
import type { AutoStopRequest, LifecycleEvent } from '../experiments/lifecycle.js';
import { findExperimentById, toExperiment, type Experiment, type ExperimentRow } from '../experiments/read.js';
import type { OutboundEvent } from '../webhook-endpoints/read.js';
import { conditionsOf, minSampleReached, parseGuardrailCondition, recommendationOf, type ConditionState } from './conditions.js';
import { analysisFailed, guardrailRegressed, lifecycleEvent, noData, recommendationChanged, srmCleared, srmDetected } from './events.js';
import type { AlertsDeps } from './deps.js';
import { pValueText } from '../../stats/rule-words.js';
import { listAlertStates, saveAlertState } from './store.js';

type Transition = { state: ConditionState; previous: { active: boolean; value: string | null } | null };

/** The event a condition's transition sends, or null when it sends none (clearing sends only srm_cleared). */
function eventFor(ctx: AlertsDeps, experiment: Experiment, snapshot: AnalysisSnapshot, { state, previous }: Transition): OutboundEvent | null {
  const wasActive = previous?.active === true;
  const publicUrl = ctx.config.publicUrl;
  if (!state.active) return state.condition === 'srm' && wasActive ? srmCleared(experiment, snapshot, publicUrl) : null;
  if (wasActive && previous?.value === state.value) return null;
  if (state.condition === 'srm') return srmDetected(experiment, snapshot, publicUrl);
  if (state.condition === 'recommendation') return recommendationChanged(experiment, snapshot, publicUrl);
  if (state.condition === 'no_data') return noData(experiment, snapshot, state.value ?? '', publicUrl);
  const guardrail = parseGuardrailCondition(state.condition);
  if (guardrail) return guardrailRegressed(experiment, snapshot, guardrail, publicUrl);
  return null;
}

/**
 * The auto-stop a snapshot calls for, if any: a broken split first, then harm, then the
 * recommendation. The notes are read by people on the experiment page: names and words, no ids
 * (the snapshot is in stop_snapshot_id and the audit entry).
 */
export function autoStopFor(experiment: Experiment, snapshot: AnalysisSnapshot): Omit<AutoStopRequest, 'workspaceId' | 'experimentId'> | null {
  const { auto_stop: autoStop } = experiment;
  const snapshotId = snapshot.id;
  if (autoStop.on_srm && snapshot.srm_warning) {
    const p = snapshot.srm_chi_squared_p;
    return {
      reason: 'bug',
      condition: 'srm',
      snapshotId,
      notes: `Stopped automatically: the split does not match the weights (sample ratio test ${p === null ? 'failed' : pValueText(p)}), so its results cannot be trusted.`,
    };
  }
  const regressions = snapshot.decision.guardrail_regressions;
  if (autoStop.on_guardrail_regression && regressions.length > 0 && minSampleReached(experiment, snapshot)) {
    const names = regressions.map((item) => `${item.variant_key} makes the guardrail ${item.metric_name || item.metric_key} worse`).join('; ');
    return {
      reason: 'lost',
      condition: 'guardrail_regression',
      snapshotId,
      notes: `Stopped automatically: ${names}.`,
    };
  }
  const recommendation = recommendationOf(snapshot);
  if (!autoStop.on_recommendation || !recommendation || !minSampleReached(experiment, snapshot)) return null;
  const reasons = { ship: 'won', rollback: 'lost', no_difference: 'inconclusive' } as const;
  const value = recommendation.recommendation;
  if (value !== 'ship' && value !== 'rollback' && value !== 'no_difference') return null;
  const variant = recommendation.variant_key ?? 'the control';
  const words = { ship: `ship ${variant}`, rollback: `roll back to ${variant}`, no_difference: 'no difference found' }[value];
  return { reason: reasons[value], condition: 'recommendation', snapshotId, notes: `Stopped automatically: the recommendation is ${words}.` };
}

/** Evaluates a stored snapshot of a running experiment: alerts first, then the auto-stop. */
export async function onSnapshot(ctx: AlertsDeps, trx: Executor, row: ExperimentRow, snapshot: AnalysisSnapshot): Promise<(() => void) | void> {
  if (row.status !== 'running') return;
  const experiment = toExperiment(row);
  const states = await listAlertStates(trx, row.id);
  const now = ctx.clock.now();
  for (const state of conditionsOf(experiment, snapshot)) {
    const stored = states.get(state.condition);
    const previous = stored ? { active: stored.active === 1, value: stored.value } : null;
    const event = eventFor(ctx, experiment, snapshot, { state, previous });
    if (event) await ctx.publish(trx, event);
    const unchanged = previous ? previous.active === state.active && previous.value === state.value : !state.active;
    if (unchanged) continue;
    const next = { experiment_id: row.id, condition: state.condition, workspace_id: row.workspace_id, active: state.active ? 1 : 0, value: state.value };
    await saveAlertState(trx, { ...next, snapshot_id: snapshot.id, changed_at: now }, stored !== undefined);
  }
  const stop = autoStopFor(experiment, snapshot);
  if (!stop) return;
  const stopped = await ctx.stopAutomatically(trx as Tx, { ...stop, workspaceId: row.workspace_id, experimentId: row.id });
  return stopped?.afterCommit;
}

/** An analysis that failed for good: experiment.analysis_failed, once until a snapshot succeeds again. */
export async function onAnalysisFailed(ctx: AlertsDeps, trx: Executor, experimentId: string, reason: string): Promise<void> {
  const row = await findExperimentById(trx, experimentId);
  if (!row || row.status !== 'running') return;
  const states = await listAlertStates(trx, experimentId);
  const stored = states.get('analysis_failed');
  if (stored?.active === 1) return;
  await ctx.publish(trx, analysisFailed(toExperiment(row), reason, ctx.config.publicUrl));
  const state = { experiment_id: experimentId, condition: 'analysis_failed', workspace_id: row.workspace_id, active: 1, value: null };
  await saveAlertState(trx, { ...state, snapshot_id: null, changed_at: ctx.clock.now() }, stored !== undefined);
}

export async function onLifecycle(ctx: AlertsDeps, trx: Executor, event: LifecycleEvent): Promise<void> {
  await ctx.publish(trx, lifecycleEvent(event, ctx.config.publicUrl));
}

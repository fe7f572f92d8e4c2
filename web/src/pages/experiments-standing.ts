// How each experiment stands, for the list: from its latest snapshot in the history, which is
// not a peek (reading /results through the UI would log one per listed experiment).
import { api } from '../api.js';
import type { Experiment, Snapshot, SnapshotHistory } from '../types.js';
import { focusVariant, type RecommendationCode } from './results-model.js';
import { liftOf } from './results-scorecard.js';

export interface Standing {
  recommendation: RecommendationCode;
  variantKey: string | null;
  srm: boolean;
  smallestSample: number;
  lift: { variant: string; mean: number; low: number; high: number; chance: number } | null;
}

/** The latest snapshot: first among the recent ones, else the whole history (oldest first). */
async function latestSnapshot(experiment: Experiment): Promise<Snapshot | null> {
  const path = `/v1/experiments/${experiment.id}/results/history`;
  const end = experiment.stopped_at ? Date.parse(experiment.stopped_at) : Date.now();
  const recent = new Date(end - Math.max(2 * experiment.decision_rule.snapshot_cadence_minutes * 60_000, 86_400_000)).toISOString();
  const first = await api<SnapshotHistory>('GET', `${path}?limit=200&since=${encodeURIComponent(recent)}`);
  const found = first.snapshots.at(-1) ?? (await api<SnapshotHistory>('GET', `${path}?limit=200`)).snapshots.at(-1);
  return (found as Snapshot | undefined) ?? null;
}

export async function latestStanding(experiment: Experiment): Promise<Standing | null> {
  if (!experiment.started_at) return null;
  const snapshot = await latestSnapshot(experiment);
  if (!snapshot) return null;
  const recommendation = snapshot.decision.recommendation;
  const variant = focusVariant(snapshot, recommendation);
  const cell = liftOf(variant?.effect);
  return {
    recommendation: recommendation.action,
    variantKey: recommendation.variant_key,
    srm: snapshot.srm_warning,
    smallestSample: Math.min(...snapshot.per_variant.map((v) => v.sample_size)),
    lift: variant && cell?.relative ? { variant: variant.variant_key, mean: cell.mean, low: cell.low, high: cell.high, chance: cell.chance } : null,
  };
}

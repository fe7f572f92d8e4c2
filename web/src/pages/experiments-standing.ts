// How each experiment stands, for the list: from its latest snapshot's summary in the history,
// which is not a peek (reading /results through the UI would log one per listed experiment) and
// is under 1 kB a snapshot.
import type { Experiment, SnapshotSummary } from '../types.js';
import { loadSummaries } from './results-history.js';
import type { RecommendationCode } from './results-model.js';

export interface Standing {
  recommendation: RecommendationCode;
  variantKey: string | null;
  controlKey: string | null;
  srm: boolean;
  smallestSample: number;
  lift: { variant: string; mean: number; low: number; high: number; chance: number } | null;
}

/** The latest summary: the last of the recent ones, else the last of the whole history (oldest first, every page). */
export async function latestSummary(experiment: Experiment): Promise<SnapshotSummary | null> {
  const end = experiment.stopped_at ? Date.parse(experiment.stopped_at) : Date.now();
  const recent = new Date(end - Math.max(2 * experiment.decision_rule.snapshot_cadence_minutes * 60_000, 86_400_000)).toISOString();
  return (await loadSummaries(experiment.id, recent)).at(-1) ?? (await loadSummaries(experiment.id)).at(-1) ?? null;
}

/** The treatment the list talks about: the recommended one, else the one most likely to beat the control. */
function focusOf(summary: SnapshotSummary): SnapshotSummary['per_variant'][number] | undefined {
  const treatments = summary.per_variant.filter((v) => !v.is_control);
  return (
    treatments.find((v) => v.variant_key === summary.recommendation.variant_key) ??
    [...treatments].sort((a, b) => (b.chance_to_beat_control ?? 0) - (a.chance_to_beat_control ?? 0))[0]
  );
}

export async function latestStanding(experiment: Experiment): Promise<Standing | null> {
  if (!experiment.started_at) return null;
  const summary = await latestSummary(experiment);
  if (!summary) return null;
  const variant = focusOf(summary);
  const relative = variant?.relative;
  const interval = relative?.credible_interval_95;
  return {
    recommendation: summary.recommendation.action,
    variantKey: summary.recommendation.variant_key,
    controlKey: summary.per_variant.find((v) => v.is_control)?.variant_key ?? null,
    srm: summary.srm_warning,
    smallestSample: Math.min(...summary.per_variant.map((v) => v.sample_size)),
    lift:
      variant && relative && interval && relative.mean !== null
        ? { variant: variant.variant_key, mean: relative.mean, low: interval[0], high: interval[1], chance: variant.chance_to_beat_control ?? 0.5 }
        : null,
  };
}

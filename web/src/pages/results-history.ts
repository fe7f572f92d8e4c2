// The primary metric's lift against the control over the snapshots, for the history chart, read
// from the compact history (`?fields=summary`: under 1 kB a snapshot instead of about 20 kB).
import { api } from '../api.js';
import type { LiftPoint } from '../charts/history-chart.js';
import type { Snapshot, SnapshotSummaryHistory, SnapshotSummary } from '../types.js';

export type LiftHistory = SnapshotSummary[];

/** Every snapshot's summary, oldest first (not a peek: the history is not logged). */
export async function loadHistory(id: string): Promise<LiftHistory> {
  try {
    return (await api<SnapshotSummaryHistory>('GET', `/v1/experiments/${id}/results/history?fields=summary&limit=200`)).snapshots;
  } catch {
    return [];
  }
}

/** The latest full snapshot as a summary entry, so the chart ends where the page's numbers are. */
function summaryOf(snapshot: Snapshot): SnapshotSummary {
  return {
    id: snapshot.id,
    computed_at: snapshot.computed_at,
    trigger: snapshot.trigger,
    primary_metric_id: snapshot.primary_metric?.id ?? null,
    verdict: snapshot.decision.verdict,
    srm_warning: snapshot.srm_warning,
    recommendation: snapshot.decision.recommendation,
    per_variant: snapshot.per_variant.map((v) => ({
      variant_key: v.variant_key,
      is_control: v.is_control,
      sample_size: v.sample_size,
      relative:
        v.effect?.relative.credible_interval_95 && v.effect.relative.mean !== null
          ? { mean: v.effect.relative.mean, credible_interval_95: v.effect.relative.credible_interval_95 }
          : null,
      chance_to_beat_control: v.effect?.chance_to_beat_control ?? null,
    })),
  } as SnapshotSummary;
}

export interface LiftSeries {
  points: Map<string, LiftPoint[]>;
  count: number;
}

/** Per treatment, its relative lift at each snapshot that has one; the latest snapshot included. */
export function liftHistory(history: LiftHistory, latest: Snapshot): LiftSeries {
  const entries = history.some((entry) => entry.id === latest.id) ? [...history] : [...history, summaryOf(latest)];
  entries.sort((a, b) => Date.parse(a.computed_at) - Date.parse(b.computed_at));
  const points = new Map<string, LiftPoint[]>();
  for (const entry of entries) {
    if (entry.primary_metric_id !== (latest.primary_metric?.id ?? null)) continue;
    for (const variant of entry.per_variant) {
      const relative = variant.relative;
      if (variant.is_control || !relative?.credible_interval_95 || relative.mean === null) continue;
      const series = points.get(variant.variant_key) ?? [];
      series.push({ t: Date.parse(entry.computed_at), mean: relative.mean, low: relative.credible_interval_95[0], high: relative.credible_interval_95[1] });
      points.set(variant.variant_key, series);
    }
  }
  return { points, count: entries.length };
}

// The primary metric's lift against the control over the snapshots, for the history chart.
import { api } from '../api.js';
import type { LiftPoint } from '../charts/history-chart.js';
import { lift } from '../format.js';
import type { Effect, Snapshot, SnapshotHistory } from '../types.js';
import { liftOf } from './results-scorecard.js';

/** One snapshot as the chart needs it: when, and each variant's effect on the primary metric. */
export interface HistoryEntry {
  computed_at: string;
  variants: { variant_key: string; is_control: boolean; effect: Effect | null }[];
}

export type LiftHistory = HistoryEntry[];

/** Every snapshot of the experiment, oldest first (not a peek: the history is not logged). */
export async function loadHistory(id: string): Promise<LiftHistory> {
  try {
    const answer = await api<SnapshotHistory>('GET', `/v1/experiments/${id}/results/history?limit=200`);
    return answer.snapshots.map((snapshot) => ({ computed_at: snapshot.computed_at, variants: snapshot.per_variant }));
  } catch {
    return [];
  }
}

export interface LiftSeries {
  points: Map<string, LiftPoint[]>;
  /** True when every point is a relative lift (else differences in the metric's terms). */
  relative: boolean;
  format: (value: number) => string;
  count: number;
}

/** Per treatment, its lift at each snapshot that has one; the latest snapshot included. */
export function liftHistory(history: LiftHistory, latest: Snapshot): LiftSeries {
  const entries = history.some((entry) => entry.computed_at === latest.computed_at)
    ? history
    : [...history, { computed_at: latest.computed_at, variants: latest.per_variant }];
  entries.sort((a, b) => Date.parse(a.computed_at) - Date.parse(b.computed_at));
  const cells = entries.flatMap((entry) =>
    entry.variants.flatMap((variant) => {
      const cell = variant.is_control ? null : liftOf(variant.effect);
      return cell ? [{ key: variant.variant_key, t: Date.parse(entry.computed_at), cell }] : [];
    }),
  );
  const relative = cells.every(({ cell }) => cell.relative);
  const points = new Map<string, LiftPoint[]>();
  for (const { key, t, cell } of cells) {
    if (relative !== cell.relative) continue;
    const series = points.get(key) ?? [];
    series.push({ t, mean: cell.mean, low: cell.low, high: cell.high });
    points.set(key, series);
  }
  return { points, relative, format: (value) => lift(value, 0), count: entries.length };
}

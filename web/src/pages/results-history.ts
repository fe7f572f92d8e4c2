// The primary metric's lift against the control over the snapshots, for the history chart, read
// from the compact history the server computes (`?fields=summary`: under 1 kB a snapshot instead of
// about 20 kB).
import { api } from '../api.js';
import type { LiftPoint } from '../charts/history-chart.js';
import type { Snapshot, SnapshotSummaryHistory, SnapshotSummary } from '../types.js';

export type LiftHistory = SnapshotSummary[];

/** Pages of 200 a history is read in, at most: 4,000 snapshots, over five months at a 1-hour cadence. */
const MAX_PAGES = 20;

/**
 * The compact summaries of an experiment's snapshots, oldest first, every page of them (or those
 * computed at or after `since`). The server computes each summary (`?fields=summary`); the UI
 * never derives one from a full snapshot. Not a peek: the history is not logged.
 */
export async function loadSummaries(id: string, since?: string): Promise<SnapshotSummary[]> {
  const base = `/v1/experiments/${id}/results/history?fields=summary&limit=200${since ? `&since=${encodeURIComponent(since)}` : ''}`;
  const summaries: SnapshotSummary[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const answer: SnapshotSummaryHistory = await api<SnapshotSummaryHistory>('GET', cursor ? `${base}&cursor=${encodeURIComponent(cursor)}` : base);
    summaries.push(...answer.snapshots);
    cursor = answer.next_cursor;
    if (!cursor) break;
  }
  return summaries;
}

/** The history for the chart; empty when it cannot be read (the page's numbers still show). */
export async function loadHistory(id: string): Promise<LiftHistory> {
  return loadSummaries(id).catch(() => []);
}

/**
 * The history ending at the page's snapshot: when that snapshot was computed after the history
 * was read (or lies past its last page), its summary is read from the server, never recomputed here.
 */
export async function historyThrough(id: string, history: LiftHistory, latest: Snapshot | null): Promise<LiftHistory> {
  if (!latest || history.some((entry) => entry.id === latest.id)) return history;
  const newer = await loadSummaries(id, latest.computed_at).catch(() => []);
  const known = new Set(history.map((entry) => entry.id));
  return [...history, ...newer.filter((entry) => !known.has(entry.id))];
}

export interface LiftSeries {
  points: Map<string, LiftPoint[]>;
  count: number;
}

/** Per treatment, its relative lift at each snapshot that has one, on the latest snapshot's primary metric. */
export function liftHistory(history: LiftHistory, latest: Snapshot): LiftSeries {
  const entries = [...history];
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

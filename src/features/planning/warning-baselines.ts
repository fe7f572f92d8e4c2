/**
 * The primary metric's baseline from history for the `underpowered` warning (experiments/warnings.ts):
 * the same read as the planning endpoint's (history.ts, the last 14 days of the experiment's
 * environment, CUPED-adjusted when the experiment uses it). Warnings are computed on every read of
 * an experiment, so each answer is kept for ten minutes per environment and metric definition: a
 * page of experiments sharing a metric reads its history once.
 */
import type { HistoryBaselineLookup } from '../experiments/planning.js';
import type { HistoryBaselineFacts } from '../experiments/warnings.js';
import type { PlanningDeps } from './deps.js';
import { DAY_MS, readHistory } from './history.js';
import { HISTORY_DAYS } from './schemas.js';

const KEEP_MS = 10 * 60_000;
const MAX_ENTRIES = 1_000;

export function historyBaselineLookup(ctx: PlanningDeps): HistoryBaselineLookup {
  const kept = new Map<string, { at: number; value: Promise<HistoryBaselineFacts | null> }>();
  return (experiment, metric) => {
    const cuped = experiment.variance_reduction?.method === 'cuped' ? experiment.variance_reduction.lookback_days * DAY_MS : null;
    const key = [experiment.workspace_id, experiment.environment_id, metric.id, metric.updated_at, cuped ?? 0].join('|');
    const now = ctx.clock.now();
    const hit = kept.get(key);
    if (hit && now - hit.at < KEEP_MS) return hit.value;
    const days = HISTORY_DAYS.default;
    const scope = { workspaceId: experiment.workspace_id, environmentId: experiment.environment_id, from: now - days * DAY_MS, to: now, lookbackMs: cuped };
    // A warning never fails a read: without history (or a store that cannot read it) the assumption holds.
    const value = readHistory(ctx, scope, [metric])
      .then((history) => {
        const found = history?.metrics[0];
        return found?.baseline ? { ...found.baseline, units: found.units, days } : null;
      })
      .catch(() => null);
    if (kept.size >= MAX_ENTRIES) kept.delete(kept.keys().next().value as string);
    kept.set(key, { at: now, value });
    return value;
  };
}

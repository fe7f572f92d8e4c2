/**
 * One reweighting of a bandit (docs/experiments.md "Bandits"): once the burn-in is over and every
 * variant has its minimum of units, P(best) of each variant on the primary metric by Thompson
 * sampling from the period-stratified normal posteriors (seeded, the seed kept with the period),
 * weights f + (1 − K·f)·P(best) as integer percentages, written through the experiments slice.
 */
import { banditUpdate, stratifiedEstimates } from '../../stats/index.js';
import { fnv1a32 } from '../assignment/hashing.js';
import type { BanditAllocation } from '../experiments/allocation.js';
import { parseAllocation, parsePeriods } from '../experiments/allocation.js';
import { applyBanditWeights } from '../experiments/bandit-weights.js';
import { findExperimentById, parseVariants, type ExperimentRow } from '../experiments/read.js';
import { primaryPeriodTotals } from '../analysis/passes/period-totals.js';
import type { BanditsDeps } from './deps.js';

const HOUR_MS = 60 * 60 * 1000;

export type ReweightOutcome = { kind: 'reweighted'; weights: Record<string, number>; seed: number } | { kind: 'skipped'; reason: string };

const skipped = (reason: string): ReweightOutcome => ({ kind: 'skipped', reason });

/** The seed of a period's draws: fixed by the experiment and the period's number, so a retried job draws the same. */
export function periodSeed(experimentId: string, periodNumber: number): number {
  return (fnv1a32(`${experimentId}:${periodNumber}`) % 2_147_483_000) + 1;
}

export function burnInEndsAt(row: ExperimentRow, allocation: BanditAllocation): number {
  return (row.started_at ?? 0) + allocation.burn_in_hours * HOUR_MS;
}

/** An update is due: the burn-in is over and the last period began at least update_every_minutes ago. */
export function updateDue(row: ExperimentRow, allocation: BanditAllocation, now: number): boolean {
  if (row.started_at === null || now < burnInEndsAt(row, allocation)) return false;
  const last = parsePeriods(row.allocation_periods).at(-1)?.started_at ?? row.started_at;
  return now - last >= allocation.update_every_minutes * 60_000;
}

/**
 * Reweights a running bandit whose update is due. Both the schedule's job and a snapshot's
 * computation call it, so whichever comes first updates and the other finds it not due.
 */
export async function reweight(ctx: BanditsDeps, experimentId: string): Promise<ReweightOutcome> {
  const row = await findExperimentById(ctx.db, experimentId);
  const allocation = row ? parseAllocation(row.allocation) : null;
  if (!row || row.status !== 'running' || allocation?.type !== 'bandit') return skipped('not a running bandit');
  if (ctx.clock.now() < burnInEndsAt(row, allocation)) return skipped('burn-in');
  if (!updateDue(row, allocation, ctx.clock.now())) return skipped('not due: the last update is more recent than update_every_minutes');
  const periods = parsePeriods(row.allocation_periods);
  const starts = periods.length > 0 ? periods.map((period) => period.started_at) : [row.started_at as number];
  const keys = parseVariants(row.variants).map((variant) => variant.key);
  const totals = await primaryPeriodTotals({ db: ctx.db, view: await ctx.analysisStore.view() }, row, starts, keys);
  if (!totals) return skipped('no primary metric a bandit can use (none, deleted, or a ratio)');
  const cells = keys.map((key) => totals.cells.get(key) ?? []);
  const units = keys.map((key) => (totals.units.get(key) ?? []).reduce((sum, n) => sum + n, 0));
  if (Math.min(...units) < allocation.min_units_per_variant) return skipped(`fewer than ${allocation.min_units_per_variant} units in a variant`);
  const estimates = stratifiedEstimates(cells);
  if (estimates.some((estimate) => estimate.varianceOfMean === null)) return skipped('a variant has no variance estimate yet');
  const seed = periodSeed(row.id, periods.length);
  const posteriors = estimates.map((estimate) => ({ mean: estimate.mean, variance: estimate.varianceOfMean as number }));
  const update = banditUpdate(posteriors, allocation.weight_floor, { seed, higherIsBetter: totals.metric.higher_is_better === 1 });
  const weights = Object.fromEntries(keys.map((key, index) => [key, update.percentages[index] as number]));
  const probBest = Object.fromEntries(keys.map((key, index) => [key, update.probBest[index] as number]));
  const written = await applyBanditWeights(ctx, row.id, { weights, seed, probBest, basedOnPeriods: periods.length });
  return written ? { kind: 'reweighted', weights, seed } : skipped('weights unchanged, or changed meanwhile');
}

/**
 * Before a snapshot of a bandit is computed: reweights when an update is due (decisions: "a
 * snapshot computed while an update is due reweights before it is stored"), so the snapshot reads
 * the weights new units get. True when it reweighted (the caller reads the experiment again).
 */
export async function reweightIfDue(ctx: BanditsDeps, row: ExperimentRow): Promise<boolean> {
  const allocation = parseAllocation(row.allocation);
  if (row.status !== 'running' || allocation.type !== 'bandit' || !updateDue(row, allocation, ctx.clock.now())) return false;
  return (await reweight(ctx, row.id)).kind === 'reweighted';
}

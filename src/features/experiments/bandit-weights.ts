/**
 * The experiments slice's own write for a bandit's reweighting (docs/experiments.md "Bandits"): the
 * variants' weights and a new allocation period, one audited update, then the change feed so every
 * process's assignment caches drop the old weights. Stored assignments are not touched: only new
 * units are bucketed with the new weights.
 */
import { recordAudit } from '../audit/recorder.js';
import { parseAllocation, parsePeriods, type StoredPeriod } from './allocation.js';
import type { ExperimentsDeps } from './deps.js';
import { toExperiment, type ExperimentRow } from './read.js';
import type { Experiment } from './schemas.js';
import { updateExperiment } from './store.js';

export const REWEIGHTED_ACTION = 'experiment.bandit_reweighted';

export interface BanditWeights {
  /** Variant key -> integer percent; together 100. */
  weights: Record<string, number>;
  seed: number;
  /** Variant key -> P(best) from the seeded draws, kept in the audit entry. */
  probBest: Record<string, number>;
  /** How many periods the weights were computed from: a period added since makes this update stale. */
  basedOnPeriods: number;
}

const chance = (probability: number) => (probability > 0.999 ? '> 99.9%' : probability < 0.001 ? '< 0.1%' : `${(100 * probability).toFixed(1)}%`);

/**
 * The entry in words, as the audit log shows it: "Weights control 50% → 10%, treatment 50% → 90%;
 * chance of being best: control 2.1%, treatment 97.9%" (the raw numbers stay beside it).
 */
export function reweightSummary(from: Record<string, number>, update: Pick<BanditWeights, 'weights' | 'probBest'>): string {
  const keys = Object.keys(update.weights);
  const weights = keys.map((key) => `${key} ${from[key] ?? 0}% → ${update.weights[key]}%`).join(', ');
  const best = keys.map((key) => `${key} ${chance(update.probBest[key] ?? 0)}`).join(', ');
  return `Weights ${weights}; chance of being best: ${best}`;
}

/**
 * Writes the new weights as a new period, unless the experiment stopped being a running bandit or
 * another update got there first (then null). Equal weights start no period (also null).
 */
export async function applyBanditWeights(ctx: ExperimentsDeps, experimentId: string, update: BanditWeights): Promise<Experiment | null> {
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const query = trx.selectFrom('experiments').selectAll().where('id', '=', experimentId);
    const row: ExperimentRow | undefined = await ctx.seam.forUpdate(query).executeTakeFirst();
    if (!row || row.status !== 'running' || parseAllocation(row.allocation).type !== 'bandit') return null;
    const periods = parsePeriods(row.allocation_periods);
    if (periods.length !== update.basedOnPeriods) return null;
    const current = toExperiment(row);
    if (current.variants.every((variant) => update.weights[variant.key] === variant.weight)) return null;
    const now = ctx.clock.now();
    const period: StoredPeriod = { started_at: now, weights: update.weights, seed: update.seed };
    const variants = current.variants.map((variant) => ({ ...variant, weight: update.weights[variant.key] ?? variant.weight }));
    const changes: Partial<ExperimentRow> = {
      variants: JSON.stringify(variants),
      allocation_periods: JSON.stringify([...periods, period]),
      weights_changed: 1,
      updated_at: now,
    };
    await updateExperiment(trx, row.id, changes);
    const from = Object.fromEntries(current.variants.map((variant) => [variant.key, variant.weight]));
    await recordAudit(trx, {
      workspaceId: row.workspace_id,
      actorId: null,
      action: REWEIGHTED_ACTION,
      targetType: 'experiment',
      targetId: row.id,
      payload: { summary: reweightSummary(from, update), from, to: update.weights, seed: update.seed, prob_best: update.probBest, period: periods.length },
      at: now,
    });
    return toExperiment({ ...row, ...changes });
  });
  if (updated) ctx.changes.publish({ topic: 'experiment', workspaceId: updated.workspace_id, id: updated.id, keys: [updated.key] });
  return updated;
}

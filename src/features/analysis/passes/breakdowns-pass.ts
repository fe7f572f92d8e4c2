/**
 * The breakdowns of a snapshot: which breakdowns, their SQL pass, then the pure build on the
 * statistics thread (compute/thread/stats-thread.ts), and the names beside the `source` values.
 */
import { apiKeyNames } from '../../api-keys/read.js';
import type { ExperimentRow } from '../../experiments/read.js';
import type { Experiment } from '../../experiments/schemas.js';
import type { MetricRow } from '../../metrics/read.js';
import { banditSrmWeights, type BanditInput } from '../compute/bandit-analysis.js';
import { analysedVariants } from '../compute/build.js';
import { NONE_LABEL, OTHER_LABEL } from '../compute/breakdowns.js';
import type { AnalysisDeps, ViewDeps } from '../deps.js';
import type { Breakdown } from '../schemas.js';
import type { BreakdownKey, BreakdownTotals, MetricSpec, UnitSource, VariantTotals } from '../store/contract.js';

export interface BreakdownPassInput {
  experiment: Experiment;
  row: ExperimentRow;
  primary: MetricRow | null;
  /** The primary metric's spec as the main pass resolved it, or null. */
  primarySpec: MetricSpec | null;
  /** The cap the main pass applied to the primary metric (a percentile cap, computed then). */
  primaryCap: number | null;
  /** The experiment-level totals (which variants are analysed). */
  totals: ReadonlyMap<string, VariantTotals>;
  chunkUnits: number | null;
  source: UnitSource;
  /** The slices' totals when already known (the maintained totals, sql/rollup/totals.ts): no pass then. */
  known?: BreakdownTotals[] | null;
  /** A bandit's periods: each slice's SRM then uses the period weights, as the overall check does. */
  bandit?: BanditInput | null;
}

/** The experiment's dimensions, then `source`, always. */
export function breakdownKeys(dimensions: readonly string[]): BreakdownKey[] {
  return [...dimensions.map((name): BreakdownKey => ({ name, kind: 'dimension' })), { name: 'source', kind: 'source' }];
}

export async function computeBreakdowns(ctx: ViewDeps & Pick<AnalysisDeps, 'stats'>, input: BreakdownPassInput): Promise<Breakdown[]> {
  const { row, experiment } = input;
  // A percentile cap is the whole experiment's, so slices use the value the main pass found.
  const primary = input.primarySpec ? { ...input.primarySpec, cap: input.primaryCap, percentile: null } : null;
  const totals =
    input.known ??
    (await ctx.view.breakdowns({
      workspaceId: row.workspace_id,
      experimentId: row.id,
      breakdowns: breakdownKeys(experiment.dimensions),
      primary,
      eventsBefore: row.stopped_at,
      chunkUnits: input.chunkUnits,
      source: input.source,
    }));
  return ctx.stats.run('breakdowns', {
    variants: experiment.variants,
    analysed: analysedVariants({ variants: experiment.variants, totals: input.totals }),
    primary: input.primary,
    breakdowns: totals,
    srmWeights: input.bandit ? banditSrmWeights(experiment.variants, input.bandit) : null,
  });
}

/**
 * Names beside ids in the `source` breakdown: each value is an API key's id, and a person reads
 * the key's name. Looked up when the snapshot is computed, so the stored snapshot carries the
 * name the key had then and no reader needs a second request.
 */
export const SOURCE_DIMENSION = 'source';

export async function labelSources(ctx: Pick<AnalysisDeps, 'db'>, workspaceId: string, breakdowns: readonly Breakdown[]): Promise<Breakdown[]> {
  const ids = breakdowns
    .filter((breakdown) => breakdown.dimension === SOURCE_DIMENSION)
    .flatMap((breakdown) => breakdown.values.map((value) => value.value))
    .filter((value) => value !== OTHER_LABEL && value !== NONE_LABEL);
  const names = await apiKeyNames(ctx.db, workspaceId, ids);
  return breakdowns.map((breakdown) =>
    breakdown.dimension !== SOURCE_DIMENSION
      ? breakdown
      : { ...breakdown, values: breakdown.values.map((value) => ({ ...value, label: names.get(value.value) ?? value.value })) },
  );
}

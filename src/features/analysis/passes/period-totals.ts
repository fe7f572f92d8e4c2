/**
 * A bandit's per-period totals (docs/statistics.md "Bandits"): for each allocation period and
 * variant, the live units whose exposure fell in the period and the primary metric's sufficient
 * statistics over them. A unit belongs to the period of its exposure (its first: a unit is exposed
 * once, and re-bucketing supersedes the old row), whatever the weights were when its events came.
 * Each store computes the rows (its periodCells); this folds them per variant.
 */
import type { SufficientStats } from '../../../stats/index.js';
import { parsePeriods } from '../../experiments/allocation.js';
import { toExperiment, type Experiment, type ExperimentRow } from '../../experiments/read.js';
import type { BanditInput } from '../compute/bandit-analysis.js';
import type { MetricRow } from '../../metrics/read.js';
import { isSequenceKind } from '../../metrics/sequence-rules.js';
import type { ViewDeps } from '../deps.js';
import { loadMetrics, resolveSpec } from './metric-totals.js';
import type { UnitSource } from '../store/contract.js';

export interface PeriodTotals {
  /** The primary metric these are sums of. */
  metric: MetricRow;
  /** variant key -> units per period (every live exposure, for the SRM check). */
  units: Map<string, number[]>;
  /** variant key -> the metric's sums per period (n counts the units with a value). */
  cells: Map<string, SufficientStats[]>;
}

/**
 * The primary metric's totals per period and variant, or null when the experiment has no usable
 * primary metric or it is a ratio or quantile metric (a bandit reweights on a per-unit mean; those
 * are not supported yet). A percentile cap is computed over all the experiment's units first.
 */
export async function primaryPeriodTotals(
  ctx: ViewDeps,
  row: ExperimentRow,
  starts: readonly number[],
  variantKeys: readonly string[],
  source: UnitSource = 'events',
): Promise<PeriodTotals | null> {
  const { primary, components } = await loadMetrics(ctx, { ...toExperiment(row), guardrail_metric_ids: [], secondary_metric_ids: [] });
  // A quantile has no per-unit mean for a bandit to reweight on; funnel and retention metrics are
  // counted apart (sequence-pass.ts): a bandit on either is analysed as a fixed split.
  if (!primary || primary.kind === 'ratio' || primary.kind === 'quantile' || isSequenceKind(primary.kind)) return null;
  const scope = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, source };
  let { spec } = await resolveSpec(ctx, row, primary, components, source);
  if (spec.percentile) {
    spec = { ...spec, cap: await ctx.view.percentileCap(scope, spec, spec.percentile), percentile: null };
  }
  const periodCount = Math.max(1, starts.length);
  const units = new Map(variantKeys.map((key) => [key, new Array<number>(periodCount).fill(0)]));
  const cells = new Map(variantKeys.map((key) => [key, Array.from({ length: periodCount }, () => ({ n: 0, sum: 0, sumOfSquares: 0 }))]));
  for (const cell of await ctx.view.periodCells(scope, spec, starts)) {
    const unitRow = units.get(cell.variant_key);
    const cellRow = cells.get(cell.variant_key);
    if (!unitRow || !cellRow || cell.period >= periodCount) continue;
    unitRow[cell.period] = cell.units;
    cellRow[cell.period] = { n: cell.n, sum: cell.sum, sumOfSquares: cell.sumOfSquares };
  }
  return { metric: primary, units, cells };
}

/**
 * What the snapshot of a bandit stratifies by: its periods and the primary metric's per-period
 * totals; null for a fixed allocation, or when the primary metric cannot be stratified (the
 * snapshot is then computed as for a fixed split).
 */
export async function banditInputOf(ctx: ViewDeps, experiment: Experiment, row: ExperimentRow, source: UnitSource = 'events'): Promise<BanditInput | null> {
  if (experiment.allocation.type !== 'bandit' || row.started_at === null) return null;
  const stored = parsePeriods(row.allocation_periods);
  const weights = Object.fromEntries(experiment.variants.map((variant) => [variant.key, variant.weight]));
  const periods = stored.length > 0 ? stored : [{ started_at: row.started_at, weights, seed: null }];
  const keys = experiment.variants.map((variant) => variant.key);
  const totals = await primaryPeriodTotals(
    ctx,
    row,
    periods.map((period) => period.started_at),
    keys,
    source,
  );
  if (!totals) return null;
  return { stopAtProbBest: experiment.allocation.stop_at_prob_best, periods, units: totals.units, cells: totals.cells };
}

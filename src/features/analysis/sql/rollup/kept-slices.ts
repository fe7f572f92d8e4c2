/**
 * The guardrails' and secondary metrics' slices kept with the maintained totals
 * (docs/analysis.md "Maintained totals"), as ClickHouse keeps them (clickhouse/metric-slices.ts):
 * per kept metric of the plan, the cells a breakdown pass of that metric alone would add up (its
 * own values, no covariate), folded from the same per-unit rows as the totals, in the same
 * transaction, and stored as rows of analysis_rollup_totals whose slice starts with the metric's
 * fold (`kept:<hash>:`). A snapshot's metric breakdowns then read those rows instead of adding up
 * every unit's rollups once per metric (at 1M units, three such passes were most of an
 * incremental snapshot's time).
 */
import { sql } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import { kept, slicePlan, type SliceFold } from '../../clickhouse/metric-slices.js';
import type { BreakdownInput, BreakdownTotals, TotalsPlan } from '../../store/contract.js';
import { PlanFold, type Cells } from './contributions.js';
import { planHash, totalsOfRows } from './stored-cells.js';

const KEPT = 'kept:';

/** The prefix of one fold's rows among the totals. */
const foldPrefix = (hash: string) => `${KEPT}${hash}:`;

/** The totals' rows of the experiment itself and the primary's slices, not a kept metric's (a condition on `slice`). */
export const ownSlices = sql<boolean>`slice NOT LIKE ${`${KEPT}%`}`;

/**
 * The plan hash a refresh stores (analysis_rollup_state.totals_plan): the plan's, marked as kept
 * with its metrics' slices, so totals kept before the slices were are added up again once.
 */
export function storedPlanHash(plan: TotalsPlan): string {
  return `${KEPT}${planHash(plan)}`;
}

/** The folds of each kept metric's slices into `cells`, reading that metric's columns of the totals' per-unit rows as the primary's. */
export function keptSliceFolds(cells: Cells, folds: readonly SliceFold[]): PlanFold[] {
  return folds.map((fold) => new PlanFold(cells, fold.plan, { prefix: foldPrefix(fold.hash), primary: { m: fold.m, d: fold.d } }));
}

/** Adds (sign 1) or takes away (sign -1) these per-unit rows' contributions to each kept metric's slices, in `cells`. */
export function accumulateKept(cells: Cells, folds: readonly SliceFold[], rows: readonly Record<string, unknown>[], sign: 1 | -1): void {
  if (rows.length === 0) return;
  for (const fold of keptSliceFolds(cells, folds)) for (const row of rows) fold.add(row, sign);
}

/**
 * One metric's breakdowns from the kept slices, or null when none serve: not from the rollups,
 * a metric not kept (a percentile cap, a ratio), or the last refresh kept no slices of it (no
 * totals of a plan, a build in steps in progress, an experiment without units).
 */
export async function keptSliceTotals(executor: Executor, input: BreakdownInput): Promise<BreakdownTotals[] | null> {
  if (input.source !== 'rollups' || input.primary === null || input.breakdowns.length === 0 || !kept(input.primary)) return null;
  const state = await executor
    .selectFrom('analysis_rollup_state')
    .select(['totals_plan', 'progress'])
    .where('experiment_id', '=', input.experimentId)
    .executeTakeFirst();
  if (!state || state.progress !== null || !state.totals_plan?.startsWith(KEPT)) return null;
  const plan = slicePlan(input.breakdowns, input.primary);
  const prefix = foldPrefix(planHash(plan));
  const rows = await executor
    .selectFrom('analysis_rollup_totals')
    .select(['slice', 'variant_key', 'units', 'sums'])
    .where('experiment_id', '=', input.experimentId)
    .where('slice', 'like', `${prefix}%`)
    .execute();
  if (rows.length === 0) return null;
  return totalsOfRows(
    rows.map((row) => ({ ...row, slice: row.slice.slice(prefix.length) })),
    plan,
  ).breakdowns;
}

/**
 * A bandit's per-period totals (docs/statistics.md "Bandits"): for each allocation period and
 * variant, the live units whose exposure fell in the period and the primary metric's sufficient
 * statistics over them. A unit belongs to the period of its exposure (its first: a unit is exposed
 * once, and re-bucketing supersedes the old row), whatever the weights were when its events came.
 * What leaves the database is one row per (period, variant).
 */
import { sql, type RawBuilder } from 'kysely';
import type { SufficientStats } from '../../stats/index.js';
import { parsePeriods } from '../experiments/allocation.js';
import { toExperiment, type Experiment, type ExperimentRow } from '../experiments/read.js';
import type { BanditInput } from './compute/bandit-analysis.js';
import type { MetricRow } from '../metrics/read.js';
import { metricColumns, valueColumns, valueJoin } from './sql/aggregate.js';
import type { AnalysisDeps } from './index.js';
import { loadMetrics, resolveSpec } from './metric-totals.js';
import { periodRowsInClickHouse } from './clickhouse/aggregate.js';
import { committedDrain } from '../../clickhouse/events.js';
import { percentileCapIn } from './store-seam.js';
import { liveUnitsOf, unitGroupOf, unitsTable } from './sql/unit-source.js';
import type { MetricSpec, UnitSource } from './store/contract.js';
import { toNumber } from './store/fold.js';

export interface PeriodTotals {
  /** The primary metric these are sums of. */
  metric: MetricRow;
  /** variant key -> units per period (every live exposure, for the SRM check). */
  units: Map<string, number[]>;
  /** variant key -> the metric's sums per period (n counts the units with a value). */
  cells: Map<string, SufficientStats[]>;
}

/** The period index of a unit exposed at v.exposed_at: the last period that started at or before it (0 before the first). */
function periodOf(starts: readonly number[]): RawBuilder<number> {
  const later = starts
    .map((start, index) => ({ start, index }))
    .slice(1)
    .reverse()
    .map(({ start, index }) => sql` WHEN v.exposed_at >= ${start} THEN ${sql.lit(index)}`);
  if (later.length === 0) return sql<number>`0`;
  return sql<number>`(CASE${sql.join(later, sql``)} ELSE 0 END)`;
}

function periodQuery(
  ctx: AnalysisDeps,
  row: ExperimentRow,
  spec: MetricSpec,
  starts: readonly number[],
  source: UnitSource,
): RawBuilder<Record<string, unknown>> {
  const input = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, metrics: [spec], source };
  const columns = metricColumns(spec, 0).map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`);
  const perUnit = sql`SELECT x.variant_key AS variant_key, MAX(x.exposed_at) AS exposed_at${sql.join(valueColumns(ctx.seam, input), sql``)}
      FROM ${unitsTable(source)}${valueJoin(input)}
      WHERE ${liveUnitsOf(source, row.id)}
      GROUP BY ${unitGroupOf(ctx.seam, source)}`;
  return sql`SELECT u.period AS period, u.variant_key AS variant_key, COUNT(*) AS units${sql.join(columns, sql``)}
    FROM (SELECT ${periodOf(starts)} AS period, v.* FROM (${perUnit}) AS v) AS u
    GROUP BY u.period, u.variant_key`;
}

/**
 * The primary metric's totals per period and variant, or null when the experiment has no usable
 * primary metric or it is a ratio metric (a bandit reweights on a per-unit mean; ratios are not
 * supported yet). A percentile cap is computed over all the experiment's units first.
 */
export async function primaryPeriodTotals(
  ctx: AnalysisDeps,
  row: ExperimentRow,
  starts: readonly number[],
  variantKeys: readonly string[],
  source: UnitSource = 'events',
): Promise<PeriodTotals | null> {
  const { primary, components } = await loadMetrics(ctx, { ...toExperiment(row), guardrail_metric_ids: [] });
  if (!primary || primary.kind === 'ratio') return null;
  let { spec } = await resolveSpec(ctx, row, primary, components, source);
  if (spec.percentile) {
    const scope = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, source };
    spec = { ...spec, cap: await percentileCapIn(ctx, scope, spec, spec.percentile), percentile: null };
  }
  const periodCount = Math.max(1, starts.length);
  const units = new Map(variantKeys.map((key) => [key, new Array<number>(periodCount).fill(0)]));
  const cells = new Map(variantKeys.map((key) => [key, Array.from({ length: periodCount }, () => ({ n: 0, sum: 0, sumOfSquares: 0 }))]));
  const rows = ctx.clickhouse
    ? await periodRowsInClickHouse(
        ctx.clickhouse,
        { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, source, drained: await committedDrain(ctx.db) },
        spec,
        starts,
      )
    : ((await ctx.reads.all([periodQuery(ctx, row, spec, starts, source).compile(ctx.db)]))[0] ?? []);
  for (const result of rows) {
    const key = String(result.variant_key);
    const period = toNumber(result.period);
    const unitRow = units.get(key);
    const cellRow = cells.get(key);
    if (!unitRow || !cellRow || period >= periodCount) continue;
    unitRow[period] = toNumber(result.units);
    cellRow[period] = { n: toNumber(result.n0), sum: toNumber(result.s0), sumOfSquares: toNumber(result.q0) };
  }
  return { metric: primary, units, cells };
}

/**
 * What the snapshot of a bandit stratifies by: its periods and the primary metric's per-period
 * totals; null for a fixed allocation, or when the primary metric cannot be stratified (the
 * snapshot is then computed as for a fixed split).
 */
export async function banditInputOf(ctx: AnalysisDeps, experiment: Experiment, row: ExperimentRow, source: UnitSource = 'events'): Promise<BanditInput | null> {
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

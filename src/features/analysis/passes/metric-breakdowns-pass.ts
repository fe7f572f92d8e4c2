/**
 * The guardrails' and secondary metrics' breakdowns (docs/analysis.md "Breakdowns by dimension"):
 * each metric's slices by the same dimensions as the primary's, one store pass and one build per
 * metric, so each metric's slices form their own Holm family, as the primary's do. A harm that
 * shows in one country only is what a guardrail's breakdown is for; tested together with the
 * primary's slices, it would be diluted by a family it has nothing to do with.
 */
import type { ExperimentRow } from '../../experiments/read.js';
import type { Experiment } from '../../experiments/schemas.js';
import type { MetricRow } from '../../metrics/read.js';
import type { BanditInput } from '../compute/bandit-analysis.js';
import { computeBreakdowns, labelSources } from './breakdowns-pass.js';
import type { AnalysisDeps, ViewDeps } from '../deps.js';
import type { Breakdown, MetricBreakdowns } from '../schemas.js';
import type { BreakdownTotals, MetricSpec, UnitSource, VariantTotals } from '../store/contract.js';

export interface BrokenDownMetric {
  metric: MetricRow;
  role: MetricBreakdowns['role'];
  /** The metric's spec as the main pass analysed it (a CUPED covariate is dropped here). */
  spec: MetricSpec;
  /** The cap the main pass applied (a percentile cap is the whole experiment's, so slices use it). */
  cap: number | null;
}

export interface MetricBreakdownsInput {
  experiment: Experiment;
  row: ExperimentRow;
  metrics: readonly BrokenDownMetric[];
  totals: ReadonlyMap<string, VariantTotals>;
  chunkUnits: number | null;
  source: UnitSource;
  bandit: BanditInput | null;
}

export async function computeMetricBreakdowns(ctx: ViewDeps & Pick<AnalysisDeps, 'stats'>, input: MetricBreakdownsInput): Promise<MetricBreakdowns[]> {
  const result: MetricBreakdowns[] = [];
  for (const { metric, role, spec, cap } of input.metrics) {
    // Slices read the metric's own values, as the primary's do: no covariate.
    const plain: MetricSpec = { ...spec, lookback_ms: null };
    const breakdowns = await computeBreakdowns(ctx, { ...input, primary: metric, primarySpec: plain, primaryCap: cap, known: null });
    result.push({
      metric_id: metric.id,
      metric_key: metric.key,
      metric_name: metric.name,
      role,
      breakdowns: await labelSources(ctx, input.row.workspace_id, breakdowns),
    });
  }
  return result;
}

/** The guardrails then the secondaries, each with its spec and cap at its place among the snapshot's metrics (primary first). */
export function brokenDownMetrics(
  loaded: { primary: MetricRow | null; guardrails: readonly MetricRow[]; secondaries: readonly MetricRow[] },
  specs: readonly MetricSpec[],
  caps: readonly (number | null)[],
): BrokenDownMetric[] {
  const offset = loaded.primary ? 1 : 0;
  const entry = (metric: MetricRow, role: MetricBreakdowns['role'], index: number): BrokenDownMetric[] => {
    const spec = specs[index];
    return spec ? [{ metric, role, spec, cap: caps[index] ?? null }] : [];
  };
  return [
    ...loaded.guardrails.flatMap((metric, i) => entry(metric, 'guardrail', offset + i)),
    ...loaded.secondaries.flatMap((metric, i) => entry(metric, 'secondary', offset + loaded.guardrails.length + i)),
  ];
}

export interface SnapshotSlicesInput {
  experiment: Experiment;
  row: ExperimentRow;
  loaded: { primary: MetricRow | null; guardrails: readonly MetricRow[]; secondaries: readonly MetricRow[] };
  /** The main pass: each metric's spec (primary first), the primary's without its covariate, and the slices' totals when maintained. */
  computed: { specs: readonly MetricSpec[]; primarySpec: MetricSpec | null; breakdowns: BreakdownTotals[] | null };
  capsApplied: readonly (number | null)[];
  totals: ReadonlyMap<string, VariantTotals>;
  chunkUnits: number | null;
  source: UnitSource;
  bandit: BanditInput | null;
}

/** The snapshot's `breakdowns` (the primary metric's) and `metric_breakdowns` (every guardrail's and secondary metric's). */
export async function snapshotSlices(
  ctx: ViewDeps & Pick<AnalysisDeps, 'stats'>,
  input: SnapshotSlicesInput,
): Promise<{ breakdowns: Breakdown[]; metric_breakdowns: MetricBreakdowns[] }> {
  const { experiment, row, loaded, computed, capsApplied, totals, chunkUnits, source, bandit } = input;
  const primary = loaded.primary;
  // Slices are analysed on the primary metric's own values, without the CUPED covariate.
  const breakdowns = await computeBreakdowns(ctx, {
    experiment,
    row,
    primary,
    primarySpec: primary ? computed.primarySpec : null,
    primaryCap: primary ? (capsApplied[0] ?? null) : null,
    totals,
    chunkUnits,
    source,
    known: computed.breakdowns,
    bandit,
  });
  const metrics = brokenDownMetrics(loaded, computed.specs, capsApplied);
  return {
    breakdowns: await labelSources(ctx, row.workspace_id, breakdowns),
    metric_breakdowns: await computeMetricBreakdowns(ctx, { experiment, row, metrics, totals, chunkUnits, source, bandit }),
  };
}

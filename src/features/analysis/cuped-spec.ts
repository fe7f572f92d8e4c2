/**
 * Which metrics of a snapshot get a CUPED covariate, and with which cap (docs/statistics.md
 * "2b. CUPED variance reduction").
 * Every metric but a ratio does when the experiment's variance_reduction is CUPED. The covariate
 * is capped like the metric: an absolute cap as is; a percentile cap (the quantile of the
 * experiment-period values) is computed before the pass by its own statement, because the pass's
 * top-value correction of the sums (percentile-cap.ts) cannot correct the cross products with x.
 */
import type { Experiment } from '../experiments/schemas.js';
import type { ExperimentRow } from '../experiments/read.js';
import type { ViewDeps } from './deps.js';
import type { ResolvedSpec } from './passes/metric-totals.js';
import type { UnitSource } from './store/contract.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The lookback in milliseconds, or null when the experiment has no variance reduction. */
export function cupedLookbackMs(experiment: Experiment): number | null {
  return experiment.variance_reduction?.method === 'cuped' ? experiment.variance_reduction.lookback_days * DAY_MS : null;
}

/** The spec with its covariate (and a pending percentile cap resolved), or as it was. */
export async function withCovariate(
  ctx: ViewDeps,
  row: ExperimentRow,
  resolved: ResolvedSpec,
  lookbackMs: number | null,
  source: UnitSource = 'events',
): Promise<ResolvedSpec> {
  const { spec } = resolved;
  if (lookbackMs === null || spec.denominator || spec.kind === 'ratio' || spec.kind === 'quantile') return resolved;
  if (!spec.percentile) return { spec: { ...spec, lookback_ms: lookbackMs } };
  const scope = { workspaceId: row.workspace_id, experimentId: row.id, eventsBefore: row.stopped_at, source };
  const cap = await ctx.view.percentileCap(scope, spec, spec.percentile);
  return { spec: { ...spec, cap, percentile: null, lookback_ms: lookbackMs } };
}

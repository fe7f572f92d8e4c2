/**
 * CUPED in a snapshot (docs/statistics.md "2b. CUPED variance reduction"): one metric's per-variant analysis on the
 * adjusted means and variances (src/stats/cuped.ts), and what the metric result reports.
 *
 * The adjusted posterior is normal, for binary metrics too: N(adjusted mean, adjusted variance /
 * n). prob_best, the expected loss, the effect and the decision rules all read that analysis
 * (its `observed_rate` and `unit_variance` are the adjusted ones); only the snapshot's
 * `observed_rate` stays the unadjusted mean (build.ts).
 */
import { analyzeNormalArms, cupedAdjust, type VariantAnalysis } from '../../../stats/index.js';
import type { Variant } from '../../experiments/schemas.js';
import type { MetricRow } from '../../metrics/read.js';
import { isSequenceKind } from '../../metrics/sequence-rules.js';
import type { CupedReport } from '../schemas.js';
import type { MetricTotals } from '../store/contract.js';

export interface CupedSettings {
  lookback_days: number;
}

interface CupedArmInput {
  variant: Variant;
  totals: MetricTotals;
}

export const RATIO_NOT_ADJUSTED = 'ratio metrics are left unadjusted';
export const SEQUENCE_NOT_ADJUSTED = 'funnel and retention metrics are left unadjusted';
export const NO_PRE_PERIOD_VARIANCE = 'not adjusted: the pre-period covariate has no variance (no unit, or every unit alike, had pre-period events)';

/**
 * Below this variance reduction CUPED is applied but gains next to nothing: removing a share r of
 * the variance is worth r / (1 - r) more units, so under 2% it is worth under about 2% more units,
 * and the intervals are under 1% narrower. The report says so, instead of a θ that suggests a gain.
 */
export const NEGLIGIBLE_VARIANCE_REDUCTION = 0.02;

export function negligibleReductionNote(reduction: number): string | null {
  if (!(reduction < NEGLIGIBLE_VARIANCE_REDUCTION)) return null;
  const percent = `${Math.max(0, 100 * reduction).toFixed(1)}%`;
  return `applied, but it removed only ${percent} of the variance (under ${100 * NEGLIGIBLE_VARIANCE_REDUCTION}%): the pre-period says little about this metric, so the intervals are about as wide as without CUPED`;
}

/** The unadjusted per-unit mean of a variant: what `observed_rate` reports. */
export function unadjustedMean(totals: MetricTotals): number {
  return totals.n > 0 ? totals.sum / totals.n : 0;
}

export interface CupedAnalysis {
  /** Null when nothing was adjusted: the caller then analyses the metric as usual. */
  analyses: VariantAnalysis[] | null;
  report: CupedReport;
}

/** The metric analysed on CUPED-adjusted statistics, or the reason it is not. */
export function analyzeWithCuped(metric: MetricRow, arms: readonly CupedArmInput[], settings: CupedSettings): CupedAnalysis {
  const off = (note: string): CupedAnalysis => ({
    analyses: null,
    report: { applied: false, lookback_days: settings.lookback_days, theta: null, variance_reduction: null, note },
  });
  if (metric.kind === 'ratio') return off(RATIO_NOT_ADJUSTED);
  if (isSequenceKind(metric.kind)) return off(SEQUENCE_NOT_ADJUSTED);
  const result = cupedAdjust(
    arms.map(({ totals }) => ({
      n: totals.n,
      sumY: totals.sum,
      sumYY: totals.sum_of_squares,
      sumX: totals.pre_sum,
      sumXX: totals.pre_sum_of_squares,
      sumXY: totals.pre_cross,
    })),
  );
  if (result === null) return off(NO_PRE_PERIOD_VARIANCE);
  const analyses = analyzeNormalArms(
    arms.map(({ variant, totals }, index) => {
      const arm = result.arms[index];
      return {
        variant_key: variant.key,
        is_control: variant.is_control,
        sample_size: totals.n,
        mean: arm?.mean ?? 0,
        unit_variance: arm?.unitVariance ?? null,
        variance_of_mean: arm?.varianceOfMean ?? null,
      };
    }),
    { higherIsBetter: metric.higher_is_better === 1 },
  );
  return {
    analyses,
    report: {
      applied: true,
      lookback_days: settings.lookback_days,
      theta: result.theta,
      variance_reduction: result.varianceReduction,
      note: negligibleReductionNote(result.varianceReduction),
    },
  };
}

/**
 * A metric's planning baseline from the sums of its history (docs/statistics.md "9a. Planning an
 * experiment"): the per-unit mean and variance a plan assumes for the control, from the same
 * per-unit sums a snapshot gets per variant.
 *
 * - binary: the rate p = conversions / n and p (1 - p), as the decision rules use it;
 * - count, revenue, duration: the mean and the sample variance (n - 1) of the per-unit values;
 * - ratio: R = Sx / Sy and the delta-method per-unit variance n Var(R) (ratio.ts);
 * - with CUPED, the variance of y - theta x (cuped.ts) over the same units: what the adjusted
 *   comparison's variance will be. A binary metric then plans with that variance as a numeric
 *   metric would (its treatment's variance is no longer p (1 - p)).
 */
import { cupedAdjust } from './cuped.js';
import type { MetricBaseline } from './power.js';
import { ratioPosterior } from './ratio.js';

/** The totals of one metric over the history's units (the analysis store's MetricTotals). */
export interface HistorySums {
  n: number;
  sum: number;
  sum_of_squares: number;
  sum_y: number;
  sum_of_squares_y: number;
  sum_xy: number;
  pre_sum: number;
  pre_sum_of_squares: number;
  pre_cross: number;
}

export interface HistoryBaseline extends MetricBaseline {
  /** 1 - CUPED's variance / the plain variance; null without CUPED or when theta is undefined. */
  variance_reduction: number | null;
}

/** The baseline, or null when the history gives nothing to plan with (fewer than 2 units, a mean or a variance of 0). */
export function baselineFromHistory(kind: 'binary' | 'count' | 'revenue' | 'duration' | 'ratio', sums: HistorySums, cuped: boolean): HistoryBaseline | null {
  if (sums.n < 2) return null;
  if (kind === 'ratio') {
    const ratio = ratioPosterior({ n: sums.n, sumX: sums.sum, sumY: sums.sum_y, sumXX: sums.sum_of_squares, sumYY: sums.sum_of_squares_y, sumXY: sums.sum_xy });
    return usable({ mean: ratio.mean, variance: ratio.unitVariance ?? 0, binary: false, variance_reduction: null });
  }
  const mean = sums.sum / sums.n;
  const plain = kind === 'binary' ? mean * (1 - mean) : Math.max(0, (sums.sum_of_squares - sums.n * mean * mean) / (sums.n - 1));
  const adjusted = cuped
    ? cupedAdjust([{ n: sums.n, sumY: sums.sum, sumYY: sums.sum_of_squares, sumX: sums.pre_sum, sumXX: sums.pre_sum_of_squares, sumXY: sums.pre_cross }])
    : null;
  const arm = adjusted?.arms[0];
  if (!adjusted || !arm || arm.unitVariance === null || arm.varianceReduction === null) {
    return usable({ mean, variance: plain, binary: kind === 'binary', variance_reduction: null });
  }
  // cuped.ts's reduction is relative to the sample variance; the plain variance of a binary metric is p (1 - p).
  return usable({ mean, variance: plain * (1 - arm.varianceReduction), binary: false, variance_reduction: arm.varianceReduction });
}

function usable(baseline: HistoryBaseline): HistoryBaseline | null {
  return baseline.mean !== 0 && baseline.variance > 0 && Number.isFinite(baseline.variance) ? baseline : null;
}

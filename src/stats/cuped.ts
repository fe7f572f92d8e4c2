/**
 * CUPED (docs/statistics.md "2b. CUPED variance reduction"; Deng, Xu, Kohavi and Walker, "Improving the Sensitivity of
 * Online Controlled Experiments by Utilizing Pre-Experiment Data", WSDM 2013). Each unit has its
 * metric value y and a covariate x: the same metric over the lookback before its first exposure.
 *
 *     theta        = Cov(x, y) / Var(x)                 on the pooled units of all variants
 *     adjusted     = y_bar_v - theta (x_bar_v - x_bar_pooled)
 *     unit var     = Var_v(y) - 2 theta Cov_v(x, y) + theta^2 Var_v(x)
 *     var of mean  = unit var / n_v
 *     variance_reduction = 1 - unit var / Var_v(y), averaged over the variants
 *
 * Sample (co)variances divide by n - 1. Pure: inputs are the per-variant sums the database
 * returns, so memory does not grow with units. theta is undefined (null) when the pooled
 * covariate has no variance (no unit, or every unit, had pre-period activity of the same size):
 * then nothing is adjusted.
 */

/** One variant's sums over its units: y the metric, x the pre-period covariate. */
export interface CupedSums {
  n: number;
  sumY: number;
  sumYY: number;
  sumX: number;
  sumXX: number;
  sumXY: number;
}

export interface CupedArm {
  /** The adjusted mean ȳ − θ(x̄ − x̄_pooled). */
  mean: number;
  /** The per-unit variance of y − θx; null below 2 units. */
  unitVariance: number | null;
  /** unitVariance / n; null below 2 units. */
  varianceOfMean: number | null;
  /** 1 − unitVariance / Var(y); null when Var(y) is 0 or undefined. */
  varianceReduction: number | null;
}

export interface CupedResult {
  theta: number;
  /** The per-variant reductions averaged over the variants where it is defined (0 without any). */
  varianceReduction: number;
  arms: CupedArm[];
}

/** The sample covariance (S_ab − S_a S_b / n) / (n − 1); a variance when a = b. */
function coMoment(n: number, sumA: number, sumB: number, sumAB: number): number {
  return (sumAB - (sumA * sumB) / n) / (n - 1);
}

function pooled(arms: readonly CupedSums[]): CupedSums {
  return arms.reduce(
    (total, arm) => ({
      n: total.n + arm.n,
      sumY: total.sumY + arm.sumY,
      sumYY: total.sumYY + arm.sumYY,
      sumX: total.sumX + arm.sumX,
      sumXX: total.sumXX + arm.sumXX,
      sumXY: total.sumXY + arm.sumXY,
    }),
    { n: 0, sumY: 0, sumYY: 0, sumX: 0, sumXX: 0, sumXY: 0 },
  );
}

/** Relative size below which Var(x) counts as 0: a covariate that is constant up to rounding. */
const DEGENERATE = 1e-12;

/** θ on the pooled units, or null when Var(x) is (numerically) 0 or there are fewer than 2 units. */
export function cupedTheta(arms: readonly CupedSums[]): number | null {
  const all = pooled(arms);
  if (all.n < 2) return null;
  const varX = coMoment(all.n, all.sumX, all.sumX, all.sumXX);
  const scale = all.sumXX / all.n;
  if (!(varX > DEGENERATE * Math.max(scale, Number.MIN_VALUE))) return null;
  return coMoment(all.n, all.sumX, all.sumY, all.sumXY) / varX;
}

function adjustArm(arm: CupedSums, theta: number, pooledMeanX: number): CupedArm {
  const meanY = arm.n > 0 ? arm.sumY / arm.n : 0;
  const meanX = arm.n > 0 ? arm.sumX / arm.n : 0;
  const mean = meanY - theta * (meanX - pooledMeanX);
  if (arm.n < 2) return { mean, unitVariance: null, varianceOfMean: null, varianceReduction: null };
  const varY = Math.max(0, coMoment(arm.n, arm.sumY, arm.sumY, arm.sumYY));
  const varX = Math.max(0, coMoment(arm.n, arm.sumX, arm.sumX, arm.sumXX));
  const covXY = coMoment(arm.n, arm.sumX, arm.sumY, arm.sumXY);
  const unitVariance = Math.max(0, varY - 2 * theta * covXY + theta * theta * varX);
  return { mean, unitVariance, varianceOfMean: unitVariance / arm.n, varianceReduction: varY > 0 ? 1 - unitVariance / varY : null };
}

/** The CUPED adjustment of every variant, or null when θ is undefined (nothing to adjust with). */
export function cupedAdjust(arms: readonly CupedSums[]): CupedResult | null {
  const theta = cupedTheta(arms);
  if (theta === null) return null;
  const all = pooled(arms);
  const adjusted = arms.map((arm) => adjustArm(arm, theta, all.sumX / all.n));
  const reductions = adjusted.flatMap((arm) => (arm.varianceReduction === null ? [] : [arm.varianceReduction]));
  const varianceReduction = reductions.length === 0 ? 0 : reductions.reduce((sum, value) => sum + value, 0) / reductions.length;
  return { theta, varianceReduction, arms: adjusted };
}

/**
 * Ratio metrics (docs/metrics.md "Ratio metrics"): per variant, R = sum of numerators / sum of
 * denominators over the exposed units, with the delta-method variance of a ratio of two means
 * (Deng, Knoblich and Lu, "Applying the Delta Method in Metric Analytics", KDD 2018; the same
 * formula as gbstats `variance_of_ratios` with the per-unit covariance):
 *
 *     x_bar = Sx / n, y_bar = Sy / n, R = x_bar / y_bar
 *     s_x^2 = (Sxx - n x_bar^2) / (n - 1), s_y^2 likewise, s_xy = (Sxy - n x_bar y_bar) / (n - 1)
 *     Var(R) = (s_x^2 / y_bar^2 - 2 x_bar s_xy / y_bar^3 + x_bar^2 s_y^2 / y_bar^4) / n
 *
 * The posterior of R is taken as N(R, Var(R)), like the other numeric metrics. The "per-unit
 * variance" handed to the decision rules is n Var(R), the variance of the linearised per-unit
 * value x_i / y_bar - x_bar y_i / y_bar^2.
 */

/** Per-variant sums over units: n, sum of x and y, of their squares and of their product. */
export interface RatioSums {
  n: number;
  sumX: number;
  sumY: number;
  sumXX: number;
  sumYY: number;
  sumXY: number;
}

export interface RatioPosterior {
  mean: number;
  unitVariance: number | null;
  varianceOfMean: number | null;
}

/** The ratio's estimate and delta-method variance; variance null below 2 units or with Sy = 0. */
export function ratioPosterior(sums: RatioSums): RatioPosterior {
  const { n } = sums;
  if (n < 1 || sums.sumY === 0) return { mean: 0, unitVariance: null, varianceOfMean: null };
  const meanX = sums.sumX / n;
  const meanY = sums.sumY / n;
  const ratio = meanX / meanY;
  if (n < 2) return { mean: ratio, unitVariance: null, varianceOfMean: null };
  const varX = (sums.sumXX - n * meanX * meanX) / (n - 1);
  const varY = (sums.sumYY - n * meanY * meanY) / (n - 1);
  const covXY = (sums.sumXY - n * meanX * meanY) / (n - 1);
  const unitVariance = Math.max(0, varX / meanY ** 2 - (2 * meanX * covXY) / meanY ** 3 + (meanX ** 2 * varY) / meanY ** 4);
  return { mean: ratio, unitVariance, varianceOfMean: unitVariance / n };
}

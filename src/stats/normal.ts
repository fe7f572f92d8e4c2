/**
 * Normal posteriors of per-unit means (count, revenue and duration metrics) and the closed forms
 * that compare two of them.
 *
 * Sources: docs/statistics.md "Count, revenue and duration metrics"; with an improper flat
 * prior the posterior of a mean is N(sample mean, s^2 / n), as in GrowthBook's gbstats; gbstats
 * `get_risk` for the expected loss of two normal arms.
 */
import normalDist from '@stdlib/stats-base-dists-normal';
import type { ArmMoments, Interval, NormalParams } from './types.js';

/** Standard normal 97.5% quantile, 1.959963984540054. */
export const Z_975 = normalDist.quantile(0.975, 0, 1);

/** Sufficient statistics of a numeric metric: units, sum of values, sum of squared values. */
export interface SufficientStats {
  n: number;
  sum: number;
  sumOfSquares: number;
}

export interface NormalMeanPosterior {
  n: number;
  mean: number;
  /** Per-unit sample variance s^2 (n - 1 denominator); null with fewer than 2 units. */
  unitVariance: number | null;
  /** s^2 / n, the posterior variance of the mean; null with fewer than 2 units. */
  varianceOfMean: number | null;
  credibleInterval95: Interval | null;
}

/**
 * Per-unit mean and sample variance from (n, sum, sum of squares):
 * mean = sum / n, s^2 = (sumOfSquares - n mean^2) / (n - 1), clipped at 0 because the subtraction
 * can go slightly negative in floating point when every value is equal.
 */
export function momentsFromSums({ n, sum, sumOfSquares }: SufficientStats): ArmMoments {
  if (!Number.isInteger(n) || n < 0) {
    throw new RangeError(`n must be a non-negative integer, got ${n}`);
  }
  const mean = n > 0 ? sum / n : 0;
  const variance = n > 1 ? Math.max(0, (sumOfSquares - n * mean * mean) / (n - 1)) : 0;
  return { n, mean, variance };
}

/** Bernoulli moments of a binary metric: mean p = conversions / units, variance p(1 - p). */
export function bernoulliMoments(units: number, conversions: number): ArmMoments {
  const mean = units > 0 ? conversions / units : 0;
  return { n: units, mean, variance: mean * (1 - mean) };
}

/**
 * Posterior of the per-unit mean under a flat prior: N(mean, s^2 / n), 95% interval
 * mean +- z_0.975 sqrt(s^2 / n). Why undefined below 2 units: s^2 cannot be estimated, and
 * inventing a spread would make prob_best look certain or meaningless.
 */
export function normalMeanPosterior(stats: SufficientStats): NormalMeanPosterior {
  const moments = momentsFromSums(stats);
  if (moments.n < 2) {
    return { n: moments.n, mean: moments.mean, unitVariance: null, varianceOfMean: null, credibleInterval95: null };
  }
  const varianceOfMean = moments.variance / moments.n;
  const halfWidth = Z_975 * Math.sqrt(varianceOfMean);
  return {
    n: moments.n,
    mean: moments.mean,
    unitVariance: moments.variance,
    varianceOfMean,
    credibleInterval95: [moments.mean - halfWidth, moments.mean + halfWidth],
  };
}

/**
 * P(Y > X) for independent normals: Phi((mean_Y - mean_X) / sqrt(var_X + var_Y)).
 * With zero total variance both are point masses: 1, 0, or 1/2 on a tie.
 */
export function probGreaterNormal(x: NormalParams, y: NormalParams): number {
  const difference = y.mean - x.mean;
  const sd = Math.sqrt(x.variance + y.variance);
  if (sd === 0) {
    return difference > 0 ? 1 : difference < 0 ? 0 : 0.5;
  }
  return normalDist.cdf(difference / sd, 0, 1);
}

/**
 * E[max(D, 0)] for D ~ N(mu, sigma^2): mu Phi(mu / sigma) + sigma phi(mu / sigma)
 * (mean of a normal truncated at 0 times the probability of being positive).
 */
export function expectedPositivePart(mu: number, sigma: number): number {
  if (sigma === 0) {
    return Math.max(mu, 0);
  }
  const z = mu / sigma;
  return mu * normalDist.cdf(z, 0, 1) + sigma * normalDist.pdf(z, 0, 1);
}

/**
 * gbstats `get_risk(mu, sigma)` for the difference treatment - control ~ N(mu, sigma^2):
 * [risk of keeping control, risk of shipping treatment] = [E[max(D, 0)], E[max(-D, 0)]].
 */
export function normalRisk(mu: number, sigma: number): [number, number] {
  return [expectedPositivePart(mu, sigma), expectedPositivePart(-mu, sigma)];
}

/** Expected loss of choosing X over Y: E[max(Y - X, 0)] with Y - X ~ N(mean_Y - mean_X, var_X + var_Y). */
export function expectedLossNormal(x: NormalParams, y: NormalParams): number {
  return expectedPositivePart(y.mean - x.mean, Math.sqrt(x.variance + y.variance));
}

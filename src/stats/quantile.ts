/**
 * Quantile metrics (docs/statistics.md "Quantile metrics"): a variant's sample quantile and the
 * standard error its effect reads.
 *
 * - The quantile is numpy.quantile's default (Hyndman and Fan's type 7): with the n values sorted
 *   as v_0 <= ... <= v_{n-1} and h = (n - 1) q, v_floor(h) + (h - floor(h)) (v_floor(h)+1 - v_floor(h)).
 * - Its interval inverts one for the empirical distribution function at the estimate: F̂(ξ̂) has
 *   standard deviation σ, and the interval is the quantiles at q - z σ and q + z σ (order
 *   statistics, no density estimate). Its half width over z is the standard error, which the
 *   relative effect's delta method reads like any mean's.
 * - σ at the unit level (one value per unit, independent): sqrt(q (1 - q) / n).
 * - σ at the event level, where a unit's events are correlated: F̂(ξ̂) = Σ S_i / Σ N_i over units i,
 *   with N_i the unit's values and S_i those at or below ξ̂, a ratio of per-unit means; its
 *   variance is the delta method's (Deng, Knoblich and Lu, "Applying the Delta Method in Metric
 *   Analytics", KDD 2018, sections 3 and 4.3): (Var S - 2 R Cov(S, N) + R² Var N) / (K N̄²), with
 *   R = Σ S / Σ N, K units and sample (co)variances (ddof 1).
 */
import { Z_975 } from './normal.js';

/** The type-7 quantile of ascending `sorted` values (numpy.quantile's default); NaN without values. */
export function sampleQuantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * Math.min(1, Math.max(0, q));
  const below = Math.floor(h);
  const lower = sorted[below] as number;
  const upper = below + 1 < n ? (sorted[below + 1] as number) : lower;
  return lower + (h - below) * (upper - lower);
}

export interface QuantileSample {
  values: readonly number[];
  /** Per value, its unit (any key); absent: each value is its own unit (the unit level). */
  units?: readonly string[];
}

export interface QuantileEstimate {
  /** The sample quantile; null without values. */
  value: number | null;
  values: number;
  units: number;
  /** σ of the empirical distribution function at the estimate; null with fewer than 2 units. */
  sigma: number | null;
  interval_95: [number, number] | null;
  standard_error: number | null;
}

function ascending(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

/** σ of Σ S_i / Σ N_i over the units (the delta method for a ratio of per-unit means), or null with fewer than 2 units. */
export function clusteredSigma(values: readonly number[], units: readonly string[], threshold: number): { sigma: number | null; units: number } {
  const perUnit = new Map<string, { n: number; s: number }>();
  values.forEach((value, index) => {
    const key = units[index] as string;
    const entry = perUnit.get(key) ?? { n: 0, s: 0 };
    entry.n += 1;
    if (value <= threshold) entry.s += 1;
    perUnit.set(key, entry);
  });
  const k = perUnit.size;
  if (k < 2) return { sigma: null, units: k };
  let sumN = 0;
  let sumS = 0;
  for (const { n, s } of perUnit.values()) {
    sumN += n;
    sumS += s;
  }
  const meanN = sumN / k;
  const meanS = sumS / k;
  let varN = 0;
  let varS = 0;
  let cov = 0;
  for (const { n, s } of perUnit.values()) {
    varN += (n - meanN) ** 2;
    varS += (s - meanS) ** 2;
    cov += (n - meanN) * (s - meanS);
  }
  const ratio = sumS / sumN;
  const variance = (varS - 2 * ratio * cov + ratio ** 2 * varN) / (k - 1) / (k * meanN ** 2);
  return { sigma: Math.sqrt(Math.max(0, variance)), units: k };
}

/** The quantile `q` of a sample with its interval and standard error (see the file's comment). */
export function quantileEstimate(sample: QuantileSample, q: number): QuantileEstimate {
  const sorted = ascending(sample.values);
  const n = sorted.length;
  if (n === 0) return { value: null, values: 0, units: 0, sigma: null, interval_95: null, standard_error: null };
  const value = sampleQuantile(sorted, q);
  const clustered = sample.units ? clusteredSigma(sample.values, sample.units, value) : { sigma: n < 2 ? null : Math.sqrt((q * (1 - q)) / n), units: n };
  const { sigma } = clustered;
  if (sigma === null) return { value, values: n, units: clustered.units, sigma: null, interval_95: null, standard_error: null };
  const lower = sampleQuantile(sorted, q - Z_975 * sigma);
  const upper = sampleQuantile(sorted, q + Z_975 * sigma);
  return { value, values: n, units: clustered.units, sigma, interval_95: [lower, upper], standard_error: (upper - lower) / (2 * Z_975) };
}

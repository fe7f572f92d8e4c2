/**
 * Multi-armed bandit arithmetic (docs/statistics.md "Bandits"; decisions §17): Thompson sampling's
 * P(best) from seeded posterior draws, the additive weight floor, integer percentages by largest
 * remainder, and the period-stratified estimate and SRM expectation that keep a bandit's analysis
 * honest when its weights change.
 *
 * Reference design: GrowthBook gbstats `bayesian/bandits.py` (Gaussian Thompson sampling, the
 * additive floor p = f + (1 - K f) w, uniform when K f >= 1, a negative floor treated as none) and
 * its bandit SQL (`bandit-statistics-cte.ts`: period weights N_p / N, the stratified mean and the
 * variance sum of w_p^2 s^2 / n). Verdict uses P(best) itself as w, not gbstats' "top two" variant.
 */
import { DEFAULT_DRAWS, monteCarloNormal } from './montecarlo.js';
import { momentsFromSums, type SufficientStats } from './normal.js';
import type { NormalParams } from './types.js';

/**
 * Real-valued weights f + (1 - K f) p from probabilities p (normalised first, so draws that sum to
 * 1 - 1e-16 do not leak mass). A negative floor is no floor; a floor with K f >= 1 cannot fit on
 * the simplex and gives the uniform split (the API refuses such floors; this keeps the function
 * total).
 */
export function flooredWeights(probabilities: readonly number[], floor: number): number[] {
  const armCount = probabilities.length;
  if (armCount === 0) return [];
  for (const p of probabilities) {
    if (!(Number.isFinite(p) && p >= 0)) throw new RangeError(`probabilities must be finite and >= 0, got ${p}`);
  }
  const f = Number.isFinite(floor) ? Math.max(0, floor) : 0;
  const total = probabilities.reduce((sum, p) => sum + p, 0);
  if (armCount * f >= 1 || total === 0) return probabilities.map(() => 1 / armCount);
  return probabilities.map((p) => f + (1 - armCount * f) * (p / total));
}

/**
 * Integer percentages summing to 100, none below the floor (in percent, rounded up: a floor of
 * 1.5% guarantees 2%). Each arm first gets the floor; the rest is split in proportion to each arm's
 * share above the floor by largest remainder (Hamilton's method), ties going to the earlier arm so
 * the result is deterministic. When every weight already clears the floor this is plain largest
 * remainder of 100·w.
 */
export function toIntegerPercentages(weights: readonly number[], floor = 0): number[] {
  const armCount = weights.length;
  if (armCount === 0) return [];
  const total = weights.reduce((sum, w) => sum + w, 0);
  if (!(total > 0) || weights.some((w) => !(Number.isFinite(w) && w >= 0))) {
    throw new RangeError('weights must be finite, >= 0 and not all 0');
  }
  const ideal = weights.map((w) => (100 * w) / total);
  // 1e-9 absorbs representation error: 100 * 0.07 is 7.000000000000001, and must not need 8%.
  const wanted = Math.max(0, Math.ceil(100 * Math.max(0, floor) - 1e-9));
  const minimum = Math.min(wanted, Math.floor(100 / armCount));
  const excess = ideal.map((x) => Math.max(0, x - minimum));
  const excessTotal = excess.reduce((sum, x) => sum + x, 0);
  const rest = 100 - armCount * minimum;
  const shares = excess.map((x) => (excessTotal > 0 ? (rest * x) / excessTotal : rest / armCount));
  const result = shares.map((share) => minimum + Math.floor(share + 1e-9));
  let missing = 100 - result.reduce((sum, x) => sum + x, 0);
  const order = shares
    .map((share, index) => ({ index, remainder: share - Math.floor(share + 1e-9) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (missing <= 0) break;
    result[index] = (result[index] as number) + 1;
    missing -= 1;
  }
  return result;
}

export interface ThompsonOptions {
  seed: number;
  draws?: number;
  /** The metric's direction; with false the lowest draw is "best". Default true. */
  higherIsBetter?: boolean;
}

/**
 * P(best) of each arm by Thompson sampling: the share of joint draws from the normal posteriors in
 * which the arm is the best (ties split). The same seed and posteriors always give the same answer.
 */
export function thompsonProbBest(posteriors: readonly NormalParams[], options: ThompsonOptions): number[] {
  const higherIsBetter = options.higherIsBetter ?? true;
  const arms = posteriors.map((p) => ({ mean: higherIsBetter ? p.mean : -p.mean, variance: p.variance }));
  return monteCarloNormal(arms, { seed: options.seed, draws: options.draws ?? DEFAULT_DRAWS }).probBest;
}

export interface BanditUpdate {
  probBest: number[];
  /** f + (1 - K f) P(best), real-valued. */
  weights: number[];
  /** The weights as integer percentages summing to 100, none below the floor. */
  percentages: number[];
}

/** One reweighting: P(best) from seeded draws, the floored weights and their integer percentages. */
export function banditUpdate(posteriors: readonly NormalParams[], floor: number, options: ThompsonOptions): BanditUpdate {
  const probBest = thompsonProbBest(posteriors, options);
  const weights = flooredWeights(probBest, floor);
  const f = posteriors.length * Math.max(0, floor) >= 1 ? 0 : floor;
  return { probBest, weights, percentages: toIntegerPercentages(weights, f) };
}

export interface StratifiedEstimate {
  /** Units of the variant over all periods. */
  n: number;
  /** Σ_p w_p x̄_vp over the periods in which the variant has units. */
  mean: number;
  /** Σ_p w_p² s²_vp / n_vp: the variance of that mean; null while it cannot be estimated. */
  varianceOfMean: number | null;
}

/**
 * The period-stratified estimate of every variant. `cells[v][p]` are the sums of variant v's units
 * whose first exposure fell in period p. Period weights are w_p = N_p / N over all variants, so each
 * variant is judged on the same mix of periods whatever share of each period it was given. A period
 * in which a variant has no units is left out of that variant's sum and the other periods' weights
 * are renormalised for it (gbstats' SQL drops such cells without renormalising; they only occur
 * with tiny periods). A cell of one unit adds its mean but no variance term (its s²_vp is undefined;
 * gbstats' SQL does the same); the variance needs at least 2 units of the variant in all.
 */
export function stratifiedEstimates(cells: readonly (readonly SufficientStats[])[]): StratifiedEstimate[] {
  const periodCount = Math.max(0, ...cells.map((row) => row.length));
  const periodUnits = Array.from({ length: periodCount }, (_, p) => cells.reduce((sum, row) => sum + (row[p]?.n ?? 0), 0));
  const totalUnits = periodUnits.reduce((sum, n) => sum + n, 0);
  return cells.map((row) => {
    const present = row.flatMap((cell, p) => (cell.n > 0 ? [{ moments: momentsFromSums(cell), weight: (periodUnits[p] as number) / totalUnits }] : []));
    const n = present.reduce((sum, c) => sum + c.moments.n, 0);
    const weightTotal = present.reduce((sum, c) => sum + c.weight, 0);
    if (n === 0 || weightTotal === 0) return { n, mean: 0, varianceOfMean: null };
    const mean = present.reduce((sum, c) => sum + (c.weight / weightTotal) * c.moments.mean, 0);
    const varianceOfMean = n >= 2 ? present.reduce((sum, c) => sum + ((c.weight / weightTotal) ** 2 * c.moments.variance) / c.moments.n, 0) : null;
    return { n, mean, varianceOfMean };
  });
}

/**
 * Units each variant should have received given how many arrived in each period and the weights of
 * that period: E_v = Σ_p N_p · w_vp, with `periodWeights[p][v]` in any unit (normalised per period).
 * A bandit's moving split is then not a mismatch, and a broken split still is (compare with
 * `sampleRatioMismatch(observed, expected)`).
 */
export function banditExpectedUnits(periodUnits: readonly number[], periodWeights: readonly (readonly number[])[]): number[] {
  if (periodUnits.length !== periodWeights.length) throw new RangeError('one weight vector per period is needed');
  const armCount = periodWeights[0]?.length ?? 0;
  const expected = new Array<number>(armCount).fill(0);
  periodWeights.forEach((weights, p) => {
    if (weights.length !== armCount) throw new RangeError(`period ${p} has ${weights.length} weights, expected ${armCount}`);
    const total = weights.reduce((sum, w) => sum + w, 0);
    if (!(total > 0)) return;
    weights.forEach((w, v) => {
      expected[v] = (expected[v] as number) + ((periodUnits[p] as number) * w) / total;
    });
  });
  return expected;
}

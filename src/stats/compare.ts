/**
 * prob_best and expected_loss_if_stop_now for every arm (docs/statistics.md "2. prob_best and
 * expected_loss_if_stop_now"): exact for two arms where a closed form is feasible, otherwise the seeded Monte Carlo.
 */
import { expectedLossBeta, probGreaterBeta } from './beta.js';
import { monteCarloBeta, monteCarloNormal } from './montecarlo.js';
import { expectedLossNormal, probGreaterNormal } from './normal.js';
import type { BetaParams, Comparison, MonteCarloOptions, NormalParams } from './types.js';

/** A single arm is trivially the best and loses nothing; no arms give empty arrays. */
function trivialComparison(armCount: number): Comparison | null {
  if (armCount === 0) {
    return { probBest: [], expectedLoss: [], method: 'exact' };
  }
  if (armCount === 1) {
    return { probBest: [1], expectedLoss: [0], method: 'exact' };
  }
  return null;
}

function assertBetaParams(arms: BetaParams[]): void {
  for (const arm of arms) {
    if (!(arm.alpha > 0 && arm.beta > 0 && Number.isFinite(arm.alpha) && Number.isFinite(arm.beta))) {
      throw new RangeError(`Beta shapes must be positive and finite, got (${arm.alpha}, ${arm.beta})`);
    }
  }
}

function assertNormalParams(arms: NormalParams[]): void {
  for (const arm of arms) {
    if (!(Number.isFinite(arm.mean) && Number.isFinite(arm.variance) && arm.variance >= 0)) {
      throw new RangeError(`normal posterior needs a finite mean and variance >= 0, got (${arm.mean}, ${arm.variance})`);
    }
  }
}

/**
 * Beta arms. Two arms: Evan Miller's sum for prob_best and Stucchio's identity for the loss; with
 * non-integer shapes (e.g. a Jeffreys prior) or too many terms, Monte Carlo. Three or more arms:
 * Monte Carlo (the exact multi-arm sums grow as the product of the counts).
 */
export function compareBetaPosteriors(arms: BetaParams[], options: MonteCarloOptions = {}): Comparison {
  assertBetaParams(arms);
  const trivial = trivialComparison(arms.length);
  if (trivial !== null) {
    return trivial;
  }
  const [first, second] = arms;
  if (arms.length === 2 && first !== undefined && second !== undefined) {
    const secondBeatsFirst = probGreaterBeta(first, second);
    const lossOfFirst = expectedLossBeta(first, second);
    const lossOfSecond = expectedLossBeta(second, first);
    if (secondBeatsFirst !== null && lossOfFirst !== null && lossOfSecond !== null) {
      return {
        probBest: [1 - secondBeatsFirst, secondBeatsFirst],
        expectedLoss: [lossOfFirst, lossOfSecond],
        method: 'exact',
      };
    }
  }
  return { ...monteCarloBeta(arms, options), method: 'monte_carlo' };
}

/**
 * Normal arms. Two arms: Phi of the standardised difference and the gbstats get_risk closed form.
 * Three or more: Monte Carlo.
 */
export function compareNormalPosteriors(arms: NormalParams[], options: MonteCarloOptions = {}): Comparison {
  assertNormalParams(arms);
  const trivial = trivialComparison(arms.length);
  if (trivial !== null) {
    return trivial;
  }
  const [first, second] = arms;
  if (arms.length === 2 && first !== undefined && second !== undefined) {
    const secondBeatsFirst = probGreaterNormal(first, second);
    return {
      probBest: [1 - secondBeatsFirst, secondBeatsFirst],
      expectedLoss: [expectedLossNormal(first, second), expectedLossNormal(second, first)],
      method: 'exact',
    };
  }
  return { ...monteCarloNormal(arms, options), method: 'monte_carlo' };
}

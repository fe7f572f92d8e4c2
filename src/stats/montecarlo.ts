/**
 * Seeded Monte Carlo estimate of prob_best and expected loss for any number of arms.
 *
 * Why seeded: the same data must always give the same snapshot (docs/statistics.md "What the
 * analysis promises"), so every arm draws from its own MT19937 stream seeded with DEFAULT_SEED + arm index (stdlib's
 * samplers take the seed and run MT19937 underneath). Why 100,000 draws: the promised minimum;
 * the standard error of a probability is then at most 0.5 / sqrt(100000) = 0.0016.
 */
import betaRandom from '@stdlib/random-base-beta';
import normalRandom from '@stdlib/random-base-normal';
import type { BetaParams, MonteCarloOptions, NormalParams } from './types.js';

export const DEFAULT_DRAWS = 100_000;
export const DEFAULT_SEED = 20_240_601;

export type Sampler = () => number;

export interface MonteCarloEstimate {
  probBest: number[];
  expectedLoss: number[];
}

function resolveOptions(options: MonteCarloOptions): { draws: number; seed: number } {
  const draws = options.draws ?? DEFAULT_DRAWS;
  const seed = options.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(draws) || draws < 1) {
    throw new RangeError(`draws must be a positive integer, got ${draws}`);
  }
  return { draws, seed };
}

/** One seeded Beta sampler per arm. */
export function betaSamplers(arms: BetaParams[], seed: number = DEFAULT_SEED): Sampler[] {
  return arms.map((arm, index) => betaRandom.factory(arm.alpha, arm.beta, { seed: seed + index }));
}

/** One seeded normal sampler per arm; a zero-variance arm is a point mass. */
export function normalSamplers(arms: NormalParams[], seed: number = DEFAULT_SEED): Sampler[] {
  return arms.map((arm, index) => {
    if (arm.variance === 0) {
      return () => arm.mean;
    }
    return normalRandom.factory(arm.mean, Math.sqrt(arm.variance), { seed: seed + index });
  });
}

/**
 * For each joint draw: the arm(s) with the largest value share the "best" credit (ties split it,
 * which only happens with point masses), and every arm accrues max(best other - itself, 0). Since
 * the best other arm of a non-maximal arm is the overall maximum, and a maximal arm's loss is 0,
 * one pass with the maximum suffices: loss_j += max - x_j.
 */
export function estimateFromSamplers(samplers: Sampler[], draws: number): MonteCarloEstimate {
  const armCount = samplers.length;
  const wins = new Float64Array(armCount);
  const losses = new Float64Array(armCount);
  const values = new Float64Array(armCount);
  for (let draw = 0; draw < draws; draw += 1) {
    let maximum = -Infinity;
    for (let arm = 0; arm < armCount; arm += 1) {
      const value = (samplers[arm] as Sampler)();
      values[arm] = value;
      if (value > maximum) {
        maximum = value;
      }
    }
    let tied = 0;
    for (let arm = 0; arm < armCount; arm += 1) {
      if (values[arm] === maximum) {
        tied += 1;
      }
    }
    for (let arm = 0; arm < armCount; arm += 1) {
      const value = values[arm] as number;
      if (value === maximum) {
        wins[arm] = (wins[arm] as number) + 1 / tied;
      } else {
        losses[arm] = (losses[arm] as number) + (maximum - value);
      }
    }
  }
  return {
    probBest: Array.from(wins, (count) => count / draws),
    expectedLoss: Array.from(losses, (total) => total / draws),
  };
}

/** Monte Carlo prob_best and expected loss for Beta posteriors. */
export function monteCarloBeta(arms: BetaParams[], options: MonteCarloOptions = {}): MonteCarloEstimate {
  const { draws, seed } = resolveOptions(options);
  return estimateFromSamplers(betaSamplers(arms, seed), draws);
}

/** Monte Carlo prob_best and expected loss for normal posteriors. */
export function monteCarloNormal(arms: NormalParams[], options: MonteCarloOptions = {}): MonteCarloEstimate {
  const { draws, seed } = resolveOptions(options);
  return estimateFromSamplers(normalSamplers(arms, seed), draws);
}

import betaln from '@stdlib/math-base-special-betaln';
import { describe, expect, it } from 'vitest';
import { JEFFREYS_PRIOR, betaPosterior, probGreaterBeta } from './beta.js';
import { compareBetaPosteriors, compareNormalPosteriors } from './compare.js';
import { monteCarloBeta } from './montecarlo.js';
import type { BetaParams } from './types.js';

/** PostHog's legacy tests use Variant(key, success_count, failure_count). */
function fromSuccessFailure(successes: number, failures: number): BetaParams {
  return betaPosterior(successes, successes + failures);
}

/**
 * Independent exact check for three arms (Evan Miller; PostHog's test helper
 * probability_C_beats_A_and_B): P(C best) = 1 - P(A > C) - P(B > C) + P(A > C and B > C), the last
 * term a double sum over A's and B's alpha.
 */
function exactProbThirdIsBest(a: BetaParams, b: BetaParams, c: BetaParams): number {
  let bothBeatC = 0;
  for (let i = 0; i < a.alpha; i += 1) {
    for (let j = 0; j < b.alpha; j += 1) {
      bothBeatC += Math.exp(
        betaln(c.alpha + i + j, c.beta + a.beta + b.beta) -
          Math.log(a.beta + i) -
          Math.log(b.beta + j) -
          betaln(1 + i, a.beta) -
          betaln(1 + j, b.beta) -
          betaln(c.alpha, c.beta),
      );
    }
  }
  return 1 - (probGreaterBeta(c, a) as number) - (probGreaterBeta(c, b) as number) + bothBeatC;
}

/** 4 standard errors of a Monte Carlo proportion with the default 100,000 draws. */
const MC_TOLERANCE = 4 * Math.sqrt(0.25 / 100_000);

describe('compareBetaPosteriors', () => {
  it('is exact for two integer-shape arms: PostHog 286/2014 vs 267/2031', () => {
    // Source: PostHog test_experiment_result.py: probabilities [0.197, 0.802] (exact 0.802278) and
    // calculate_expected_loss(test, [control]) ~= 0.0010 (places=3).
    const result = compareBetaPosteriors([fromSuccessFailure(267, 2031), fromSuccessFailure(286, 2014)]);
    expect(result.method).toBe('exact');
    expect(Math.abs((result.probBest[1] as number) - 0.802278)).toBeLessThan(1e-6);
    expect((result.probBest[0] as number) + (result.probBest[1] as number)).toBeCloseTo(1, 12);
    expect(Math.abs((result.expectedLoss[1] as number) - 0.001)).toBeLessThan(5e-4);
  });

  it('agrees with its own Monte Carlo within simulation error (independent check)', () => {
    const arms = [fromSuccessFailure(267, 2031), fromSuccessFailure(286, 2014)];
    const exact = compareBetaPosteriors(arms);
    const simulated = monteCarloBeta(arms);
    expect(Math.abs((simulated.probBest[1] as number) - (exact.probBest[1] as number))).toBeLessThan(MC_TOLERANCE);
  });

  it('matches PostHog three-arm results: control 100/18, test_1 100/10, test_2 100/3', () => {
    // Source: PostHog test_calculate_results_for_two_test_variants: probabilities [0.0, 0.033, 0.967]
    // (places=1), calculate_expected_loss(test_2, [control, test_1]) ~= 0.0004 (places=3).
    const control = fromSuccessFailure(100, 18);
    const test1 = fromSuccessFailure(100, 10);
    const test2 = fromSuccessFailure(100, 3);
    const result = compareBetaPosteriors([control, test1, test2]);
    expect(result.method).toBe('monte_carlo');
    [0.0, 0.033, 0.967].forEach((published, index) => {
      expect(Math.abs((result.probBest[index] as number) - published)).toBeLessThan(0.05);
    });
    expect(Math.abs((result.expectedLoss[2] as number) - 0.0004)).toBeLessThan(5e-4);
    // Exact double sum: the Monte Carlo must be within simulation error of it.
    const exactTest2 = exactProbThirdIsBest(control, test1, test2);
    expect(Math.abs((result.probBest[2] as number) - exactTest2)).toBeLessThan(MC_TOLERANCE);
  });

  it('matches PostHog three-arm almost-equal case: control 130/65, test_1 120/60, test_2 110/52', () => {
    // Source: PostHog test_calculate_results_for_two_test_variants_almost_equal: [0.277, 0.282, 0.440]
    // (places=1); calculate_expected_loss(test_2, [control, test_1]) ~= 0.022 (places=2).
    const control = fromSuccessFailure(130, 65);
    const test1 = fromSuccessFailure(120, 60);
    const test2 = fromSuccessFailure(110, 52);
    const result = compareBetaPosteriors([control, test1, test2]);
    [0.277, 0.282, 0.44].forEach((published, index) => {
      expect(Math.abs((result.probBest[index] as number) - published)).toBeLessThan(0.05);
    });
    expect(Math.abs((result.expectedLoss[2] as number) - 0.022)).toBeLessThan(0.005);
    expect(Math.abs((result.probBest[0] as number) - exactProbThirdIsBest(test1, test2, control))).toBeLessThan(MC_TOLERANCE);
  });

  it('matches PostHog four-arm results: control 100/18, tests 100/10, 100/3, 100/30', () => {
    // Source: PostHog test_calculate_results_for_three_test_variants: [0.0, 0.033, 0.967, 0.0] (places=1).
    const arms = [
      [100, 18],
      [100, 10],
      [100, 3],
      [100, 30],
    ].map(([s, f]) => fromSuccessFailure(s as number, f as number));
    const result = compareBetaPosteriors(arms);
    [0.0, 0.033, 0.967, 0.0].forEach((published, index) => {
      expect(Math.abs((result.probBest[index] as number) - published)).toBeLessThan(0.05);
    });
    expect(result.probBest.reduce((total, value) => total + value, 0)).toBeCloseTo(1, 10);
  });

  it('is deterministic: identical input gives identical output; the seed is what changes it', () => {
    const arms = [fromSuccessFailure(50, 950), fromSuccessFailure(60, 940), fromSuccessFailure(55, 945)];
    expect(compareBetaPosteriors(arms)).toEqual(compareBetaPosteriors(arms));
    expect(compareBetaPosteriors(arms, { seed: 7 })).not.toEqual(compareBetaPosteriors(arms));
  });

  it('falls back to Monte Carlo for non-integer shapes (Jeffreys prior)', () => {
    const arms = [betaPosterior(10, 100, JEFFREYS_PRIOR), betaPosterior(20, 100, JEFFREYS_PRIOR)];
    const result = compareBetaPosteriors(arms);
    expect(result.method).toBe('monte_carlo');
    expect(result.probBest[1]).toBeGreaterThan(0.95);
  });

  it('handles one and zero arms, and rejects invalid shapes', () => {
    expect(compareBetaPosteriors([{ alpha: 2, beta: 3 }])).toEqual({ probBest: [1], expectedLoss: [0], method: 'exact' });
    expect(compareBetaPosteriors([]).probBest).toEqual([]);
    expect(() =>
      compareBetaPosteriors([
        { alpha: 0, beta: 1 },
        { alpha: 1, beta: 1 },
      ]),
    ).toThrow(RangeError);
  });
});

describe('compareNormalPosteriors', () => {
  it('is exact for two arms and reproduces gbstats get_risk(0.1, 0.05) as the two losses', () => {
    // Source: GrowthBook test_tests.py get_risk(mu=0.1, sigma=0.05) -> [0.1004245351308, 0.0004245351308414]:
    // control ~ N(0, 0.05^2 / 2) and treatment ~ N(0.1, 0.05^2 / 2) make the difference N(0.1, 0.05^2).
    const half = 0.05 ** 2 / 2;
    const result = compareNormalPosteriors([
      { mean: 0, variance: half },
      { mean: 0.1, variance: half },
    ]);
    expect(result.method).toBe('exact');
    expect(Math.abs((result.expectedLoss[0] as number) - 0.1004245351308)).toBeLessThan(1e-12);
    expect(Math.abs((result.expectedLoss[1] as number) - 0.0004245351308414)).toBeLessThan(1e-13);
    expect(Math.abs((result.probBest[1] as number) - 0.9772498680518208)).toBeLessThan(1e-12); // Phi(2)
  });

  it('with three arms, Monte Carlo is within simulation error of the exact pairwise value when one arm is out of reach', () => {
    // The third arm is 40 sd below: the race is effectively between the first two, whose exact
    // comparison is the independent check.
    const arms = [
      { mean: 1, variance: 0.01 },
      { mean: 1.1, variance: 0.02 },
      { mean: -5, variance: 0.01 },
    ];
    const result = compareNormalPosteriors(arms);
    const pairwise = compareNormalPosteriors(arms.slice(0, 2));
    expect(result.method).toBe('monte_carlo');
    expect(Math.abs((result.probBest[1] as number) - (pairwise.probBest[1] as number))).toBeLessThan(MC_TOLERANCE);
    expect(Math.abs((result.expectedLoss[0] as number) - (pairwise.expectedLoss[0] as number))).toBeLessThan(2e-3);
    expect(result.probBest[2]).toBe(0);
  });

  it('splits ties between identical point masses', () => {
    const result = compareNormalPosteriors([
      { mean: 0, variance: 0 },
      { mean: 0, variance: 0 },
      { mean: 0, variance: 0 },
    ]);
    result.probBest.forEach((value) => expect(value).toBeCloseTo(1 / 3, 10));
    expect(result.expectedLoss).toEqual([0, 0, 0]);
  });
});

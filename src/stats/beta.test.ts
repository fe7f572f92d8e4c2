import betaDist from '@stdlib/stats-base-dists-beta';
import normalDist from '@stdlib/stats-base-dists-normal';
import { describe, expect, it } from 'vitest';
import { JEFFREYS_PRIOR, betaPosterior, expectedLossBeta, probGreaterBeta } from './beta.js';
import { monteCarloBeta } from './montecarlo.js';
import type { BetaParams } from './types.js';

/**
 * Independent check of P(Y > X): Simpson's rule on the integral of f_X(t) (1 - F_Y(t)) over
 * [0, 1], with stdlib's Beta pdf and cdf. Shares no code with the closed form.
 */
function integratedProbGreater(x: BetaParams, y: BetaParams, intervals = 20_000): number {
  const h = 1 / intervals;
  let total = 0;
  for (let index = 0; index <= intervals; index += 1) {
    const t = index * h;
    const weight = index === 0 || index === intervals ? 1 : index % 2 === 1 ? 4 : 2;
    total += weight * betaDist.pdf(t, x.alpha, x.beta) * (1 - betaDist.cdf(t, y.alpha, y.beta));
  }
  return (total * h) / 3;
}

/** Independent check of E[max(Y - X, 0)]: Simpson on the integral of f_X(t) E[(Y - t)+]. */
function integratedExpectedLoss(x: BetaParams, y: BetaParams, intervals = 2_000): number {
  const h = 1 / intervals;
  const positivePartOfYMinus = (t: number): number => {
    let inner = 0;
    for (let index = 0; index <= intervals; index += 1) {
      const s = t + ((1 - t) * index) / intervals;
      const weight = index === 0 || index === intervals ? 1 : index % 2 === 1 ? 4 : 2;
      inner += weight * (s - t) * betaDist.pdf(s, y.alpha, y.beta);
    }
    return (inner * (1 - t)) / intervals / 3;
  };
  let total = 0;
  for (let index = 0; index <= intervals; index += 1) {
    const t = index * h;
    const density = betaDist.pdf(t, x.alpha, x.beta);
    if (density < 1e-12) continue;
    const weight = index === 0 || index === intervals ? 1 : index % 2 === 1 ? 4 : 2;
    total += weight * density * positivePartOfYMinus(t);
  }
  return (total * h) / 3;
}

// PostHog's legacy test gives Variant(key, success_count, failure_count): "286/2014" is 286
// conversions and 2014 non-conversions, i.e. 2300 units.
const posthogTest = betaPosterior(286, 286 + 2014);
const posthogControl = betaPosterior(267, 267 + 2031);

describe('betaPosterior', () => {
  it('is Beta(1 + conversions, 1 + units - conversions) with its mean', () => {
    expect(posthogTest).toMatchObject({ alpha: 287, beta: 2015 });
    expect(posthogTest.mean).toBeCloseTo(287 / 2302, 12);
  });

  it('matches PostHog legacy credible intervals, 286/2014 vs 267/2031', () => {
    // Source: PostHog ee/clickhouse/queries/experiments/test_experiment_result.py,
    // test_absolute_loss_less_than_one_percent_but_not_significant (published to 4 decimals).
    const [controlLow, controlHigh] = posthogControl.credibleInterval95;
    const [testLow, testHigh] = posthogTest.credibleInterval95;
    expect(Math.abs(controlLow - 0.1037)).toBeLessThan(1e-4);
    expect(Math.abs(controlHigh - 0.1299)).toBeLessThan(1e-4);
    expect(Math.abs(testLow - 0.1114)).toBeLessThan(1e-4);
    expect(Math.abs(testHigh - 0.1384)).toBeLessThan(1e-4);
  });

  it('matches PostHog legacy credible intervals, 100/18 and 100/10', () => {
    // Source: PostHog test_experiment_result.py, test_calculate_results (4 decimals).
    const control = betaPosterior(100, 118).credibleInterval95;
    const test = betaPosterior(100, 110).credibleInterval95;
    expect(Math.abs(control[0] - 0.7715)).toBeLessThan(1e-4);
    expect(Math.abs(control[1] - 0.901)).toBeLessThan(1e-4);
    expect(Math.abs(test[0] - 0.8405)).toBeLessThan(1e-4);
    expect(Math.abs(test[1] - 0.9494)).toBeLessThan(1e-4);
  });

  // Source: Spotify Confidence tests/bayesian/test_betabinomial.py, Jeffreys prior Beta(0.5, 0.5).
  const spotifyCases: Array<[number, number, number, number]> = [
    [500, 1009, 0.46473987, 0.52636595],
    [42, 104, 0.3132419, 0.49971958],
    [1005, 1502, 0.64500415, 0.69256054],
    [50, 100, 0.40317395, 0.59682605],
    [4, 10, 0.1530671, 0.69632051],
    [100, 150, 0.58861002, 0.73836135],
  ];
  it.each(spotifyCases)('matches Spotify Confidence Jeffreys interval for %i/%i', (x, n, low, high) => {
    const [lower, upper] = betaPosterior(x, n, JEFFREYS_PRIOR).credibleInterval95;
    expect(Math.abs(lower - low)).toBeLessThan(1e-7);
    expect(Math.abs(upper - high)).toBeLessThan(1e-7);
  });

  it('rejects impossible counts', () => {
    expect(() => betaPosterior(5, 4)).toThrow(RangeError);
    expect(() => betaPosterior(-1, 4)).toThrow(RangeError);
    expect(() => betaPosterior(1.5, 4)).toThrow(RangeError);
  });
});

describe('probGreaterBeta (Evan Miller closed form)', () => {
  it('gives PostHog legacy P(test best) = 0.802278 for 286/2014 vs 267/2031', () => {
    // Source: PostHog test_experiment_result.py (0.802 at places=1; 0.802278 from its exact helper
    // probability_B_beats_A).
    expect(Math.abs((probGreaterBeta(posthogControl, posthogTest) as number) - 0.802278)).toBeLessThan(1e-6);
  });

  it('gives PostHog legacy P(test best) = 0.918 for 100/10 vs 100/18', () => {
    // Source: PostHog test_calculate_results, assertAlmostEqual(probability, 0.918, places=2).
    const probability = probGreaterBeta(betaPosterior(100, 118), betaPosterior(100, 110)) as number;
    expect(Math.abs(probability - 0.918)).toBeLessThan(5e-4);
    // Same test: are_results_significant loss ~= 0.0016 (places=3), the loss of shipping the test arm.
    const loss = expectedLossBeta(betaPosterior(100, 110), betaPosterior(100, 118)) as number;
    expect(Math.abs(loss - 0.0016)).toBeLessThan(5e-4);
  });

  it('agrees with numerical integration for every form of the sum (independent check)', () => {
    const cases: Array<[BetaParams, BetaParams]> = [
      [posthogControl, posthogTest],
      [
        { alpha: 3, beta: 40 },
        { alpha: 30, beta: 7 },
      ],
      [
        { alpha: 40, beta: 3 },
        { alpha: 7, beta: 30 },
      ],
      [
        { alpha: 12, beta: 9 },
        { alpha: 11, beta: 13 },
      ],
    ];
    for (const [x, y] of cases) {
      expect(Math.abs((probGreaterBeta(x, y) as number) - integratedProbGreater(x, y))).toBeLessThan(1e-8);
      expect((probGreaterBeta(x, y) as number) + (probGreaterBeta(y, x) as number)).toBeCloseTo(1, 12);
    }
  });

  it('stays accurate with millions of conversions (normal limit, independent check)', () => {
    const x = betaPosterior(1_000_000, 10_000_000);
    const y = betaPosterior(1_001_500, 10_000_000);
    // Normal approximation, exact to ~1e-7 at these sizes: Phi(d / sqrt(v_x + v_y)).
    const variance = (p: BetaParams): number => (p.alpha * p.beta) / ((p.alpha + p.beta) ** 2 * (p.alpha + p.beta + 1));
    const z = (y.alpha / (y.alpha + y.beta) - x.alpha / (x.alpha + x.beta)) / Math.sqrt(variance(x) + variance(y));
    const normalApprox = normalDist.cdf(z, 0, 1);
    expect(Math.abs((probGreaterBeta(x, y) as number) - normalApprox)).toBeLessThan(1e-5);
  });

  it('returns null when no form has an integer term count (Jeffreys) or all are too long', () => {
    const jeffreys = betaPosterior(10, 100, JEFFREYS_PRIOR);
    expect(probGreaterBeta(jeffreys, jeffreys)).toBeNull();
    const huge = betaPosterior(2_500_000, 6_000_000);
    expect(probGreaterBeta(huge, huge)).toBeNull();
  });
});

describe('expectedLossBeta (Stucchio identity)', () => {
  it('matches PostHog legacy expected loss 0.0010 for the test arm of 286/2014 vs 267/2031', () => {
    // Source: PostHog test_experiment_result.py, calculate_expected_loss(test, [control]) ~= 0.0010
    // at places=3 (their value is a 100,000-draw simulation). Exact value: 0.00105608.
    const loss = expectedLossBeta(posthogTest, posthogControl) as number;
    expect(Math.abs(loss - 0.001)).toBeLessThan(5e-4);
    expect(Math.abs(loss - integratedExpectedLoss(posthogTest, posthogControl))).toBeLessThan(1e-7);
  });

  it('agrees with the seeded Monte Carlo within simulation error (independent check)', () => {
    const estimate = monteCarloBeta([posthogControl, posthogTest], { draws: 200_000 });
    const exactControlLoss = expectedLossBeta(posthogControl, posthogTest) as number;
    const exactTestLoss = expectedLossBeta(posthogTest, posthogControl) as number;
    // Loss standard deviations are below 0.01, so 4 SE < 1e-4 with 200,000 draws.
    expect(Math.abs((estimate.expectedLoss[0] as number) - exactControlLoss)).toBeLessThan(1e-4);
    expect(Math.abs((estimate.expectedLoss[1] as number) - exactTestLoss)).toBeLessThan(1e-4);
  });

  it('loss difference equals the difference of means', () => {
    // E[max(Y - X, 0)] - E[max(X - Y, 0)] = E[Y] - E[X].
    const x = { alpha: 30, beta: 70 };
    const y = { alpha: 45, beta: 60 };
    const difference = (expectedLossBeta(x, y) as number) - (expectedLossBeta(y, x) as number);
    expect(difference).toBeCloseTo(45 / 105 - 30 / 100, 12);
  });
});

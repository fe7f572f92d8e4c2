import { describe, expect, it } from 'vitest';
import { monteCarloNormal } from './montecarlo.js';
import { Z_975, bernoulliMoments, expectedLossNormal, momentsFromSums, normalMeanPosterior, normalRisk, probGreaterNormal } from './normal.js';

function sufficientStats(values: number[]): { n: number; sum: number; sumOfSquares: number } {
  return {
    n: values.length,
    sum: values.reduce((total, value) => total + value, 0),
    sumOfSquares: values.reduce((total, value) => total + value * value, 0),
  };
}

describe('normalMeanPosterior', () => {
  it('matches the textbook mean, s^2 / n and interval computed from the raw values (independent check)', () => {
    const values = [3, 0, 0, 7, 2, 0, 1, 5, 0, 2];
    const mean = 2;
    const sampleVariance = values.reduce((total, value) => total + (value - mean) ** 2, 0) / (values.length - 1);
    const posterior = normalMeanPosterior(sufficientStats(values));
    expect(posterior.mean).toBeCloseTo(mean, 12);
    expect(posterior.unitVariance).toBeCloseTo(sampleVariance, 12);
    expect(posterior.varianceOfMean).toBeCloseTo(sampleVariance / values.length, 12);
    const halfWidth = 1.959963984540054 * Math.sqrt(sampleVariance / values.length);
    expect(posterior.credibleInterval95?.[0]).toBeCloseTo(mean - halfWidth, 12);
    expect(posterior.credibleInterval95?.[1]).toBeCloseTo(mean + halfWidth, 12);
  });

  it('uses the exact 97.5% normal quantile', () => {
    expect(Z_975).toBeCloseTo(1.959963984540054, 14);
  });

  it('is undefined below two units and never reports a negative variance', () => {
    expect(normalMeanPosterior({ n: 0, sum: 0, sumOfSquares: 0 })).toMatchObject({
      mean: 0,
      varianceOfMean: null,
      credibleInterval95: null,
    });
    expect(normalMeanPosterior({ n: 1, sum: 4, sumOfSquares: 16 }).credibleInterval95).toBeNull();
    // 0.1 is not representable: sumOfSquares - n mean^2 rounds to a tiny negative number.
    const constant = sufficientStats(Array.from({ length: 10 }, () => 0.1));
    expect(momentsFromSums(constant).variance).toBeGreaterThanOrEqual(0);
    expect(() => momentsFromSums({ n: -1, sum: 0, sumOfSquares: 0 })).toThrow(RangeError);
  });

  it('gives Bernoulli moments p(1 - p)', () => {
    expect(bernoulliMoments(200, 50)).toEqual({ n: 200, mean: 0.25, variance: 0.1875 });
    expect(bernoulliMoments(0, 0)).toEqual({ n: 0, mean: 0, variance: 0 });
  });
});

describe('normal comparisons', () => {
  it('reproduces gbstats get_risk(mu=0.1, sigma=0.05)', () => {
    // Source: GrowthBook packages/stats/tests/bayesian/test_tests.py -> [0.1004245351308, 0.0004245351308414].
    const [riskControl, riskTreatment] = normalRisk(0.1, 0.05);
    expect(Math.abs(riskControl - 0.1004245351308)).toBeLessThan(1e-12);
    expect(Math.abs(riskTreatment - 0.0004245351308414)).toBeLessThan(1e-13);
  });

  it('gives P(Y > X) = Phi(d / sd) and agrees with the seeded Monte Carlo (independent check)', () => {
    const x = { mean: 10, variance: 0.04 };
    const y = { mean: 10.25, variance: 0.05 };
    const exact = probGreaterNormal(x, y);
    // Phi(0.25 / 0.3), independently computed with scipy.stats.norm.cdf: 0.7976716190363569.
    expect(Math.abs(exact - 0.7976716190363569)).toBeLessThan(1e-12);
    // E[max(Y - X, 0)] = d Phi(d / sd) + sd phi(d / sd), scipy: 0.28399146738217995.
    expect(Math.abs(expectedLossNormal(x, y) - 0.28399146738217995)).toBeLessThan(1e-12);
    const estimate = monteCarloNormal([x, y], { draws: 200_000 });
    // 4 standard errors of a proportion with 200,000 draws: 4 * sqrt(0.25 / 200000) < 0.0045.
    expect(Math.abs((estimate.probBest[1] as number) - exact)).toBeLessThan(0.0045);
    expect(Math.abs((estimate.expectedLoss[0] as number) - expectedLossNormal(x, y))).toBeLessThan(2e-3);
  });

  it('treats zero-variance arms as point masses', () => {
    expect(probGreaterNormal({ mean: 1, variance: 0 }, { mean: 2, variance: 0 })).toBe(1);
    expect(probGreaterNormal({ mean: 2, variance: 0 }, { mean: 1, variance: 0 })).toBe(0);
    expect(probGreaterNormal({ mean: 1, variance: 0 }, { mean: 1, variance: 0 })).toBe(0.5);
    expect(expectedLossNormal({ mean: 1, variance: 0 }, { mean: 3, variance: 0 })).toBe(2);
  });
});

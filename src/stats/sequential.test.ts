import normalDist from '@stdlib/stats-base-dists-normal';
import { describe, expect, it } from 'vitest';
import {
  differenceEstimate,
  gaussianMixtureRhoSquared,
  gaussianMixtureTest,
  msprtLogLikelihoodRatio,
  msprtMixingVariance,
  msprtTest,
  normalMixtureBoundary,
  normalMixtureLogEValue,
  runningMinimumPValue,
} from './sequential.js';

describe('Gaussian-mixture e-value (Waudby-Smith et al. 2023)', () => {
  // Source: confseq test/uniform_boundaries_unittest.cpp, two-sided normal mixture tuned with
  // v_opt = 100, alpha_opt = 0.05. confseq's rho is our 1 / rho^2 (v = N* = 100).
  const rhoSquared = gaussianMixtureRhoSquared(0.05, 100);

  it('matches confseq best_rho(100, 0.05) = 12.60056', () => {
    expect(Math.abs(1 / rhoSquared - 12.60056)).toBeLessThan(1e-5);
  });

  it('matches confseq log_superMG(10, 100) = -0.6510052', () => {
    expect(Math.abs(normalMixtureLogEValue(10, 100, rhoSquared) - -0.6510052)).toBeLessThan(1e-7);
  });

  it('matches confseq bound(100, log(1 / 0.05)) = 30.35209', () => {
    expect(Math.abs(normalMixtureBoundary(100, rhoSquared, 0.05) - 30.35209)).toBeLessThan(1e-5);
  });

  it('gives the same log e-value through per-arm moments (S = 10 at N = 100)', () => {
    // n = 50 per arm, unit variances 1: se^2 = 2 / 50, so delta = 0.2 makes
    // st^2 = delta^2 N / se^2 = 0.04 * 100 / 0.04 = 100, st = 10: confseq's log_superMG(10, 100).
    const result = gaussianMixtureTest(
      { n: 50, mean: 1, variance: 1 },
      { n: 50, mean: 1.2, variance: 1 },
      {
        alpha: 0.05,
        tuningSampleSize: 100,
      },
    );
    expect(Math.abs(result.logEvidence - -0.6510052)).toBeLessThan(1e-7);
    expect(result.pValue).toBe(1);
    expect(result.rejectsNull).toBe(false);
  });

  it('has a confidence-sequence half-width where the e-value is exactly 1/alpha', () => {
    const control = { n: 4000, mean: 0.1, variance: 0.09 };
    const base = gaussianMixtureTest(control, { n: 4100, mean: 0.1, variance: 0.1 }, { alpha: 0.05, tuningSampleSize: 8000 });
    const atBoundary = gaussianMixtureTest(
      control,
      { n: 4100, mean: 0.1 + base.halfWidth, variance: 0.1 },
      {
        alpha: 0.05,
        tuningSampleSize: 8000,
      },
    );
    expect(atBoundary.logEvidence).toBeCloseTo(Math.log(20), 9);
    expect(atBoundary.pValue).toBeCloseTo(0.05, 9);
    // Independent closed form of the same half-width, as written in GrowthBook's gbstats
    // sequential_interval_halfwidth: sqrt(s2) sqrt(2 (N rho^2 + 1) ln(sqrt(N rho^2 + 1) / alpha) / (N^2 rho^2)),
    // s2 = per-observation variance = se^2 N.
    const n = 8100;
    const rho2 = gaussianMixtureRhoSquared(0.05, 8000);
    const s2 = base.varianceOfDelta * n;
    const gbstats = Math.sqrt(s2) * Math.sqrt((2 * (n * rho2 + 1) * Math.log(Math.sqrt(n * rho2 + 1) / 0.05)) / (n * n * rho2));
    expect(base.halfWidth).toBeCloseTo(gbstats, 12);
  });

  it('gives no evidence without a usable variance', () => {
    const empty = { n: 0, mean: 0, variance: 0 };
    const zeroVariance = { n: 100, mean: 0, variance: 0 };
    const options = { alpha: 0.05, tuningSampleSize: 100 };
    expect(gaussianMixtureTest(empty, zeroVariance, options)).toMatchObject({ pValue: 1, rejectsNull: false });
    expect(gaussianMixtureTest(zeroVariance, zeroVariance, options).halfWidth).toBe(Infinity);
    // 0 conversions in a small control next to a large treatment: a plug-in variance of 0 would
    // make the control mean look certain; such looks carry no evidence.
    const largeTreatment = { n: 50_000, mean: 0.1, variance: 0.09 };
    expect(gaussianMixtureTest(zeroVariance, largeTreatment, options).rejectsNull).toBe(false);
    expect(gaussianMixtureTest({ n: 29, mean: 0.01, variance: 0.0099 }, largeTreatment, options).pValue).toBe(1);
    expect(() => gaussianMixtureRhoSquared(1.2, 100)).toThrow(RangeError);
  });
});

describe('mSPRT (Johari, Pekelis and Walsh 2017)', () => {
  /**
   * Independent check: Lambda is the likelihood ratio of delta ~ N(theta, V) against theta = 0,
   * averaged over theta ~ N(0, tau^2). Simpson's rule over theta in [-12 tau, 12 tau].
   */
  function integratedLikelihoodRatio(delta: number, variance: number, tauSquared: number): number {
    const tau = Math.sqrt(tauSquared);
    const steps = 20_000;
    const h = (24 * tau) / steps;
    let total = 0;
    for (let index = 0; index <= steps; index += 1) {
      const theta = -12 * tau + index * h;
      const weight = index === 0 || index === steps ? 1 : index % 2 === 1 ? 4 : 2;
      const ratio = Math.exp((theta * delta - (theta * theta) / 2) / variance);
      total += weight * ratio * normalDist.pdf(theta, 0, tau);
    }
    return (total * h) / 3;
  }

  it('equals the mixture likelihood ratio computed by numerical integration', () => {
    for (const [delta, variance, tauSquared] of [
      [0.01, 2e-5, 1e-4],
      [-0.004, 1e-5, 4e-6],
      [0.3, 0.05, 0.2],
    ] as Array<[number, number, number]>) {
      const closedForm = Math.exp(msprtLogLikelihoodRatio(delta, variance, tauSquared));
      expect(closedForm / integratedLikelihoodRatio(delta, variance, tauSquared)).toBeCloseTo(1, 8);
    }
  });

  it('maximises evidence for an MDE-sized effect at tau^2 = MDE^2 - V (the mixing-variance derivation)', () => {
    const effect = 0.002;
    const variance = 4e-7;
    let bestTauSquared = 0;
    let bestLog = -Infinity;
    for (let tauSquared = 1e-8; tauSquared < 2e-5; tauSquared *= 1.001) {
      const value = msprtLogLikelihoodRatio(effect, variance, tauSquared);
      if (value > bestLog) {
        bestLog = value;
        bestTauSquared = tauSquared;
      }
    }
    expect(bestTauSquared / (effect * effect - variance)).toBeCloseTo(1, 2);
    expect(msprtMixingVariance(0.02, 0.1)).toBeCloseTo(0.002 ** 2, 15);
  });

  it('rejects at Lambda >= 1/alpha and has its half-width where Lambda = 1/alpha', () => {
    const control = { n: 10_000, mean: 0.1, variance: 0.09 };
    const options = { alpha: 0.05, mixingVariance: msprtMixingVariance(0.1, 0.1) };
    const base = msprtTest(control, { n: 10_000, mean: 0.1, variance: 0.09 }, options);
    const atBoundary = msprtTest(control, { n: 10_000, mean: 0.1 + base.halfWidth, variance: 0.09 }, options);
    expect(atBoundary.logEvidence).toBeCloseTo(Math.log(20), 9);
    const beyond = msprtTest(control, { n: 10_000, mean: 0.1 + 1.01 * base.halfWidth, variance: 0.09 }, options);
    expect(beyond.rejectsNull).toBe(true);
    expect(beyond.pValue).toBeLessThan(0.05);
  });

  it('gives no evidence with a zero mixing variance or no data', () => {
    const arm = { n: 100, mean: 0.2, variance: 0.16 };
    expect(msprtTest({ n: 100, mean: 0, variance: 0 }, arm, { alpha: 0.05, mixingVariance: 0 })).toMatchObject({
      pValue: 1,
      rejectsNull: false,
      halfWidth: Infinity,
    });
    expect(differenceEstimate({ n: 0, mean: 0, variance: 0 }, arm).varianceOfDelta).toBe(Infinity);
  });
});

describe('runningMinimumPValue', () => {
  it('keeps the smallest p-value seen', () => {
    expect(runningMinimumPValue(undefined, 0.4)).toBe(0.4);
    expect(runningMinimumPValue(null, 0.4)).toBe(0.4);
    expect(runningMinimumPValue(0.01, 0.4)).toBe(0.01);
    expect(runningMinimumPValue(0.5, 0.4)).toBe(0.4);
  });
});

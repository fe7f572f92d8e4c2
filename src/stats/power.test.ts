import normalDist from '@stdlib/stats-base-dists-normal';
import { describe, expect, it } from 'vitest';
import { resolveDecisionRule } from './decision.js';
import { binaryBaseline, estimateUnitsPerVariant, powerAtUnits, type PowerQuestion } from './power.js';
import { msprtLogLikelihoodRatio } from './sequential.js';

const question = (overrides: Partial<PowerQuestion['rule']>, rate = 0.05, variantCount = 2): PowerQuestion => {
  const rule = resolveDecisionRule(overrides);
  return { rule, variantCount, baseline: binaryBaseline(rate, rule.minimum_detectable_effect) };
};

describe('estimateUnitsPerVariant', () => {
  it('for the posterior rule is the textbook one-sided sample size n = (z_t + z_0.8)^2 (s_c^2 + s_t^2) / delta^2', () => {
    const q = question({ method: 'bayesian.posterior_threshold', minimum_detectable_effect: 0.1 }, 0.1);
    const z = normalDist.quantile(0.995, 0, 1) + normalDist.quantile(0.8, 0, 1);
    const textbook = (z * z * (0.1 * 0.9 + 0.11 * 0.89)) / 0.01 ** 2;
    expect(estimateUnitsPerVariant(q)).toBe(Math.ceil(textbook));
  });

  it('returns the first n at which the approximate power reaches 80%', () => {
    for (const method of ['bayesian.always_valid_evalue', 'frequentist.sequential_msprt'] as const) {
      const q = question({ method, minimum_detectable_effect: 0.1 });
      const units = estimateUnitsPerVariant(q) as number;
      expect(powerAtUnits(q, units)).toBeGreaterThanOrEqual(0.8);
      expect(powerAtUnits(q, units - 1)).toBeLessThan(0.8);
    }
  });

  it('the mSPRT critical value is where the mixture likelihood ratio reaches 1/alpha', () => {
    // At the estimate, a z of mu - z_0.8 (the 20th percentile of the z-score) sits on the boundary.
    const q = question({ method: 'frequentist.sequential_msprt', minimum_detectable_effect: 0.1 }, 0.2);
    const units = estimateUnitsPerVariant(q) as number;
    const variance = (0.2 * 0.8 + 0.22 * 0.78) / units;
    const delta = 0.02;
    const z = delta / Math.sqrt(variance) - normalDist.quantile(powerAtUnits(q, units), 0, 1);
    expect(msprtLogLikelihoodRatio(z * Math.sqrt(variance), variance, delta * delta)).toBeCloseTo(Math.log(1 / 0.005), 6);
  });

  it('with the default settings the always-valid rules need millions of units per variant at a 5% rate', () => {
    const msprt = estimateUnitsPerVariant(question({ method: 'frequentist.sequential_msprt' })) as number;
    const evalue = estimateUnitsPerVariant(question({ method: 'bayesian.always_valid_evalue' })) as number;
    expect(msprt).toBeGreaterThan(1_500_000);
    expect(evalue).toBeGreaterThan(1_500_000);
    expect(msprt).toBeGreaterThan(50 * resolveDecisionRule({}).min_sample_per_variant);
  });

  it('needs more units at lower rates, more with more treatments (Bonferroni), fewer for a larger MDE', () => {
    const rule = { method: 'frequentist.sequential_msprt' as const, minimum_detectable_effect: 0.05 };
    const at = (rate: number, variants = 2) => estimateUnitsPerVariant(question(rule, rate, variants)) as number;
    expect(at(0.05)).toBeGreaterThan(at(0.1));
    expect(at(0.1)).toBeGreaterThan(at(0.5));
    expect(at(0.1, 4)).toBeGreaterThan(at(0.1, 2));
    expect(estimateUnitsPerVariant(question({ ...rule, minimum_detectable_effect: 0.5 }, 0.1))).toBeLessThan(at(0.1) / 50);
  });

  it('is null when there is nothing to detect or it would take more than a billion units', () => {
    expect(estimateUnitsPerVariant(question({}, 0))).toBeNull();
    expect(estimateUnitsPerVariant(question({ minimum_detectable_effect: 1e-6 }, 0.01))).toBeNull();
  });
});

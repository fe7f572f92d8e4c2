import { describe, expect, it } from 'vitest';
import { compareBetaPosteriors } from './compare.js';
import { betaPosterior } from './beta.js';
import { DEFAULT_DECISION_RULE, binaryDecisionVariant, decide, resolveDecisionRule, sequentialEvidence } from './decision.js';
import type { DecisionRuleSettings, DecisionVariant } from './types.js';

/** Binary variants with exact prob_best, control first. */
function binaryVariants(arms: Array<[string, number, number]>): DecisionVariant[] {
  const comparison = compareBetaPosteriors(arms.map(([, units, conversions]) => betaPosterior(conversions, units)));
  return arms.map(([key, units, conversions], index) => binaryDecisionVariant(key, index === 0, units, conversions, comparison.probBest[index] ?? null));
}

function rule(overrides: Partial<DecisionRuleSettings>): DecisionRuleSettings {
  return resolveDecisionRule(overrides);
}

describe('resolveDecisionRule', () => {
  it('fills the spec defaults and keeps given values', () => {
    expect(resolveDecisionRule(undefined)).toEqual(DEFAULT_DECISION_RULE);
    expect(resolveDecisionRule({ posterior_threshold: 0.95, min_sample_per_variant: undefined })).toMatchObject({
      posterior_threshold: 0.95,
      min_sample_per_variant: 20_000,
      method: 'bayesian.posterior_threshold',
    });
  });
});

describe('decide: bayesian.posterior_threshold', () => {
  const settings = rule({ posterior_threshold: 0.95, min_sample_per_variant: 1000, max_duration_days: 28 });

  it('keeps running below min_sample_per_variant even with a clear leader', () => {
    const variants = binaryVariants([
      ['control', 900, 90],
      ['treatment', 900, 150],
    ]);
    const decision = decide({ variants, rule: settings, days_elapsed: 3 });
    expect(decision).toMatchObject({ satisfied: false, verdict: 'keep_running', variant_key: null });
    expect(decision.reason).toBe('control, treatment have fewer units than the minimum sample of 1,000 per variant');
  });

  it('declares the variant whose prob_best reaches the threshold', () => {
    const variants = binaryVariants([
      ['control', 5000, 500],
      ['treatment', 5000, 600],
    ]);
    expect(decide({ variants, rule: settings, days_elapsed: 3 })).toMatchObject({
      satisfied: true,
      verdict: 'winner',
      variant_key: 'treatment',
    });
  });

  it('reports max_duration_reached when time is up without a decision', () => {
    const variants = binaryVariants([
      ['control', 5000, 500],
      ['treatment', 5000, 510],
    ]);
    expect(decide({ variants, rule: settings, days_elapsed: 28 })).toMatchObject({
      satisfied: false,
      verdict: 'max_duration_reached',
    });
    expect(decide({ variants, rule: settings, days_elapsed: 27 }).verdict).toBe('keep_running');
  });

  it('reports no_difference once an MDE-sized difference is ruled out', () => {
    const variants = binaryVariants([
      ['control', 400_000, 40_000],
      ['treatment', 400_000, 40_000],
    ]);
    const decision = decide({ variants, rule: { ...settings, minimum_detectable_effect: 0.05 }, days_elapsed: 10 });
    expect(decision).toMatchObject({ satisfied: false, verdict: 'no_difference', variant_key: null });
  });

  it('does not decide when prob_best is unavailable', () => {
    const variants = binaryVariants([
      ['control', 5000, 500],
      ['treatment', 5000, 600],
    ]).map((variant) => ({
      ...variant,
      prob_best: null,
    }));
    expect(decide({ variants, rule: settings, days_elapsed: 1 }).verdict).toBe('keep_running');
  });
});

describe('decide: always-valid rules', () => {
  const methods = ['bayesian.always_valid_evalue', 'frequentist.sequential_msprt'] as const;

  it.each(methods)('%s: a clearly better treatment wins', (method) => {
    const settings = rule({ method, posterior_threshold: 0.95, min_sample_per_variant: 5000, minimum_detectable_effect: 0.1 });
    const variants = binaryVariants([
      ['control', 10_000, 1000],
      ['treatment', 10_000, 1250],
    ]);
    expect(decide({ variants, rule: settings, days_elapsed: 5 })).toMatchObject({
      satisfied: true,
      verdict: 'winner',
      variant_key: 'treatment',
    });
  });

  it.each(methods)('%s: a clearly worse single treatment makes control the winner', (method) => {
    const settings = rule({ method, posterior_threshold: 0.95, min_sample_per_variant: 5000, minimum_detectable_effect: 0.1 });
    const variants = binaryVariants([
      ['control', 10_000, 1250],
      ['treatment', 10_000, 1000],
    ]);
    expect(decide({ variants, rule: settings, days_elapsed: 5 })).toMatchObject({ verdict: 'winner', variant_key: 'control' });
  });

  it.each(methods)('%s: equal arms keep running, then show no_difference with enough data', (method) => {
    const settings = rule({ method, posterior_threshold: 0.95, min_sample_per_variant: 5000, minimum_detectable_effect: 0.1 });
    const small = binaryVariants([
      ['control', 2000, 200],
      ['treatment', 2000, 200],
    ]);
    expect(decide({ variants: small, rule: settings, days_elapsed: 5 }).verdict).toBe('keep_running');
    const large = binaryVariants([
      ['control', 400_000, 40_000],
      ['treatment', 400_000, 40_000],
    ]);
    expect(decide({ variants: large, rule: settings, days_elapsed: 5 }).verdict).toBe('no_difference');
  });

  it.each(methods)('%s: splits alpha over treatments (Bonferroni) and keeps a past rejection', (method) => {
    const settings = rule({ method, posterior_threshold: 0.95, min_sample_per_variant: 5000, minimum_detectable_effect: 0.1 });
    const variants = binaryVariants([
      ['control', 2000, 200],
      ['b', 2000, 205],
      ['c', 2000, 195],
    ]);
    const evidence = sequentialEvidence({ variants, rule: settings });
    evidence.forEach((item) => expect(item.alpha).toBeCloseTo(0.025, 12));
    expect(decide({ variants, rule: settings, days_elapsed: 1 }).verdict).toBe('keep_running');
    const sticky = decide({ variants, rule: settings, days_elapsed: 1, previous_p_values: { b: 0.01 } });
    expect(sticky).toMatchObject({ satisfied: true, verdict: 'winner', variant_key: 'b' });
  });

  it('uses the first variant as control when none is flagged, and needs two variants', () => {
    const settings = rule({ method: 'bayesian.always_valid_evalue', posterior_threshold: 0.95 });
    const variants = binaryVariants([
      ['a', 10_000, 1000],
      ['b', 10_000, 1300],
    ]).map((variant) => ({
      ...variant,
      is_control: false,
    }));
    expect(sequentialEvidence({ variants, rule: settings }).map((item) => item.variant_key)).toEqual(['b']);
    expect(decide({ variants: variants.slice(0, 1), rule: settings, days_elapsed: 0 }).verdict).toBe('keep_running');
  });

  it('is pure: same input, same output, input untouched', () => {
    const settings = rule({ method: 'frequentist.sequential_msprt', posterior_threshold: 0.95 });
    const variants = binaryVariants([
      ['control', 10_000, 1000],
      ['treatment', 10_000, 1100],
    ]);
    const snapshot = JSON.stringify(variants);
    const first = decide({ variants, rule: settings, days_elapsed: 2 });
    expect(decide({ variants, rule: settings, days_elapsed: 2 })).toEqual(first);
    expect(JSON.stringify(variants)).toBe(snapshot);
  });
});

describe('decide: reasons in words', () => {
  it('words every verdict of every rule without field names, for a person to read', () => {
    const clear = binaryVariants([
      ['control', 5000, 500],
      ['treatment', 5000, 600],
    ]);
    const close = binaryVariants([
      ['control', 5000, 500],
      ['treatment', 5000, 510],
    ]);
    const alike = binaryVariants([
      ['control', 400_000, 40_000],
      ['treatment', 400_000, 40_000],
    ]);
    const reasons: string[] = [];
    for (const method of ['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt'] as const) {
      const settings = rule({ method, posterior_threshold: 0.95, min_sample_per_variant: 1000, minimum_detectable_effect: 0.05 });
      for (const variants of [clear, close, alike]) {
        for (const days_elapsed of [3, 28.25]) reasons.push(decide({ variants, rule: settings, days_elapsed }).reason);
      }
    }
    const posterior = rule({ posterior_threshold: 0.95, min_sample_per_variant: 1000 });
    expect(decide({ variants: clear, rule: posterior, days_elapsed: 3 }).reason).toMatch(
      /^treatment has a 99\.\d\d% chance of being best, at least the 95% the rule asks for$/,
    );
    expect(decide({ variants: close, rule: posterior, days_elapsed: 28.25 }).reason).toMatch(
      /^the planned maximum of 28 days is over \(28\.3 days running\); /,
    );
    for (const reason of reasons) expect(reason).not.toMatch(/\b[a-z]+_[a-z_]+\b|>=|prob_best/);
  });
});

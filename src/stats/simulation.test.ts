/**
 * Seeded simulations of the decision rules' guarantees under continuous monitoring: the decision is
 * evaluated after every batch of units, as the background analysis does after every snapshot.
 * Sizes are modest so the whole src/stats run stays well under a minute; tolerances are 3 binomial
 * standard errors. The peeking figures quoted in docs/statistics.md come from these runs.
 */
import mt19937 from '@stdlib/random-base-mt19937';
import { beforeAll, describe, expect, it } from 'vitest';
import { betaPosterior, probGreaterBeta } from './beta.js';
import { binaryDecisionVariant, decide, resolveDecisionRule } from './decision.js';
import type { DecisionRuleSettings, DecisionVariant } from './types.js';

interface Scenario {
  /** True conversion rate of each arm; the first arm is the control. */
  rates: number[];
  reps: number;
  batches: number;
  batchSize: number;
  seed: number;
  rules: DecisionRuleSettings[];
}

interface RuleTally {
  /** First "winner" key seen at any look (stopping as soon as the rule is satisfied). */
  anyLook: Map<string, number>;
  /** "winner" key at the last look only (what a single, pre-planned look would conclude). */
  finalLook: Map<string, number>;
}

function increment(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** prob_best from exact pairwise comparison; only two-arm posterior rules are simulated. */
function withProbBest(variants: DecisionVariant[], conversions: number[], units: number): DecisionVariant[] {
  if (variants.length !== 2) return variants;
  const [control, treatment] = conversions.map((count) => betaPosterior(count, units));
  const treatmentBest = probGreaterBeta(control as ReturnType<typeof betaPosterior>, treatment as ReturnType<typeof betaPosterior>);
  return variants.map((variant, index) => ({
    ...variant,
    prob_best: treatmentBest === null ? null : index === 1 ? treatmentBest : 1 - treatmentBest,
  }));
}

function simulateMonitoring(scenario: Scenario): RuleTally[] {
  const random = mt19937.factory({ seed: scenario.seed });
  const toUnit = 1 / (random.MAX + 1);
  const tallies = scenario.rules.map(() => ({ anyLook: new Map<string, number>(), finalLook: new Map<string, number>() }));
  const minSampleForProbBest = Math.min(...scenario.rules.map((rule) => rule.min_sample_per_variant));
  for (let rep = 0; rep < scenario.reps; rep += 1) {
    const conversions = scenario.rates.map(() => 0);
    const firstWinner: Array<string | null> = scenario.rules.map(() => null);
    for (let batch = 1; batch <= scenario.batches; batch += 1) {
      scenario.rates.forEach((rate, arm) => {
        for (let unit = 0; unit < scenario.batchSize; unit += 1) {
          if (random() * toUnit < rate) conversions[arm] = (conversions[arm] as number) + 1;
        }
      });
      const units = batch * scenario.batchSize;
      let variants = conversions.map((count, arm) => binaryDecisionVariant(arm === 0 ? 'control' : `treatment_${arm}`, arm === 0, units, count, null));
      if (units >= minSampleForProbBest) variants = withProbBest(variants, conversions, units);
      scenario.rules.forEach((rule, index) => {
        const decision = decide({ variants, rule, days_elapsed: 0 });
        const tally = tallies[index] as RuleTally;
        if (decision.verdict === 'winner' && firstWinner[index] === null) {
          firstWinner[index] = decision.variant_key;
          increment(tally.anyLook, decision.variant_key as string);
        }
        if (batch === scenario.batches && decision.verdict === 'winner') {
          increment(tally.finalLook, decision.variant_key as string);
        }
      });
    }
  }
  return tallies;
}

function total(map: Map<string, number>): number {
  return [...map.values()].reduce((sum, count) => sum + count, 0);
}

/** Upper end of "within simulation error": rate + 3 binomial standard errors. */
function withinError(rate: number, reps: number): number {
  return rate + 3 * Math.sqrt((rate * (1 - rate)) / reps);
}

const ALPHA = 0.05;
const MDE = 0.1; // relative: 10% of the control rate
const sequentialRules = [
  resolveDecisionRule({
    method: 'bayesian.always_valid_evalue',
    posterior_threshold: 1 - ALPHA,
    min_sample_per_variant: 5000,
    minimum_detectable_effect: MDE,
  }),
  resolveDecisionRule({
    method: 'frequentist.sequential_msprt',
    posterior_threshold: 1 - ALPHA,
    min_sample_per_variant: 5000,
    minimum_detectable_effect: MDE,
  }),
];
const posteriorRules = [0.95, 0.995].map((threshold) =>
  resolveDecisionRule({ method: 'bayesian.posterior_threshold', posterior_threshold: threshold, min_sample_per_variant: 250 }),
);
// 40 looks, one every 250 units per arm, up to 10,000 units per arm; baseline rate 10%.
const design = { batches: 40, batchSize: 250 };

describe('A/A monitored after every batch (400 replications, 40 looks)', () => {
  const reps = 400;
  let evalue: RuleTally;
  let msprt: RuleTally;
  let posterior95: RuleTally;
  let posterior995: RuleTally;
  beforeAll(() => {
    const rules = [...sequentialRules, ...posteriorRules];
    const tallies = simulateMonitoring({ ...design, rates: [0.1, 0.1], reps, seed: 1, rules });
    [evalue, msprt, posterior95, posterior995] = tallies as [RuleTally, RuleTally, RuleTally, RuleTally];
  });

  it('the e-value rule keeps the false-positive rate at or below alpha', () => {
    expect(total(evalue.anyLook) / reps).toBeLessThanOrEqual(withinError(ALPHA, reps));
  });

  it('the mSPRT keeps the false-positive rate at or below alpha', () => {
    expect(total(msprt.anyLook) / reps).toBeLessThanOrEqual(withinError(ALPHA, reps));
  });

  it('peeking inflates the posterior-threshold rule well beyond its single-look rate', () => {
    // A single look at threshold t declares a winner with probability ~2 (1 - t) under A/A.
    const single95 = total(posterior95.finalLook) / reps;
    const peeking95 = total(posterior95.anyLook) / reps;
    expect(single95).toBeLessThanOrEqual(withinError(0.1, reps));
    expect(peeking95).toBeGreaterThan(2 * single95);
    expect(peeking95).toBeGreaterThan(withinError(0.1, reps));
    const single995 = total(posterior995.finalLook) / reps;
    const peeking995 = total(posterior995.anyLook) / reps;
    expect(single995).toBeLessThanOrEqual(withinError(0.01, reps));
    expect(peeking995).toBeGreaterThan(single995);
  });
});

describe('A/A/A monitored after every batch: Bonferroni keeps the family-wise rate (300 replications)', () => {
  const reps = 300;
  let tallies: RuleTally[] = [];
  beforeAll(() => {
    tallies = simulateMonitoring({ ...design, rates: [0.1, 0.1, 0.1], reps, seed: 2, rules: sequentialRules });
  });

  it.each([0, 1])('rule %i stays at or below alpha', (index) => {
    expect(total((tallies[index] as RuleTally).anyLook) / reps).toBeLessThanOrEqual(withinError(ALPHA, reps));
  });
});

describe('A/B with a true lift of twice the MDE (200 replications)', () => {
  const reps = 200;
  const rates = [0.1, 0.1 * (1 + 2 * MDE)];
  let tallies: RuleTally[] = [];
  beforeAll(() => {
    const rules = [...sequentialRules, posteriorRules[0] as DecisionRuleSettings];
    tallies = simulateMonitoring({ ...design, rates, reps, seed: 3, rules });
  });

  it.each(['e-value', 'mSPRT', 'posterior threshold 0.95'].map((name, index) => [name, index] as const))(
    'the %s rule detects the treatment',
    (_name, index) => {
      const tally = tallies[index] as RuleTally;
      expect((tally.anyLook.get('treatment_1') ?? 0) / reps).toBeGreaterThanOrEqual(0.8);
      expect((tally.anyLook.get('control') ?? 0) / reps).toBeLessThanOrEqual(withinError(ALPHA, reps));
    },
  );
});

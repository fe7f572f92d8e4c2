import { describe, expect, it } from 'vitest';
import { resolveDecisionRule } from './decision.js';
import { mdeAtUnits, planMetric, unitsNeeded } from './planning.js';
import { binaryBaseline, estimateUnitsPerVariant, powerAtUnits, type MetricBaseline } from './power.js';
import type { DecisionRuleSettings } from './types.js';

// Reference numbers: python3 scripts/reference/planning_power.py (SciPy's norm and brentq).
const continuous: MetricBaseline = { mean: 10, variance: 25, binary: false };
const rate = (p: number): MetricBaseline => ({ mean: p, variance: p * (1 - p), binary: true });
const rule = (overrides: Partial<DecisionRuleSettings>) => resolveDecisionRule(overrides);
const equal = { control: 50, treatments: [50] };

describe('unitsNeeded', () => {
  it('posterior rule, equal weights: (z_0.995 + z_0.8)^2 2 sigma^2 / delta^2 (SciPy case 1: 2,335.79)', () => {
    expect(unitsNeeded({ rule: rule({ minimum_detectable_effect: 0.05 }), weights: equal, metric: continuous })).toBe(2336);
  });

  it('posterior rule, control 20% and treatment 80%: units of the smaller arm (SciPy case 2: 13,369.50)', () => {
    const plan = { rule: rule({ minimum_detectable_effect: 0.1 }), weights: { control: 20, treatments: [80] }, metric: rate(0.1) };
    expect(unitsNeeded(plan)).toBe(13370);
  });

  it('e-value rule with two treatments splits alpha in two (SciPy case 4: 28,988.11)', () => {
    const plan = {
      rule: rule({ method: 'bayesian.always_valid_evalue', minimum_detectable_effect: 0.02 }),
      weights: { control: 34, treatments: [33, 33] },
      metric: continuous,
    };
    // 34/33/33: the smallest arms hold n, the control 34/33 n, so a little fewer than at equal thirds.
    const atThirds = unitsNeeded({ ...plan, weights: { control: 1, treatments: [1, 1] } });
    expect(atThirds).toBe(28989);
    expect(unitsNeeded(plan)).toBeLessThan(28989);
  });

  it('mSPRT, control 30% and treatment 70%, binary 5% rate, MDE 20% (SciPy case 5: 15,359.62)', () => {
    const plan = {
      rule: rule({ method: 'frequentist.sequential_msprt', minimum_detectable_effect: 0.2 }),
      weights: { control: 30, treatments: [70] },
      metric: rate(0.05),
    };
    expect(unitsNeeded(plan)).toBe(15360);
  });

  it('with equal weights answers what the underpowered warning’s estimate answers', () => {
    for (const method of ['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt'] as const) {
      const settings = rule({ method, minimum_detectable_effect: 0.05 });
      const warning = estimateUnitsPerVariant({ rule: settings, variantCount: 3, baseline: binaryBaseline(0.1, 0.05) });
      expect(unitsNeeded({ rule: settings, weights: { control: 34, treatments: [33, 33] }, metric: rate(0.1) })).not.toBeNull();
      expect(unitsNeeded({ rule: settings, weights: { control: 1, treatments: [1, 1] }, metric: rate(0.1) })).toBe(warning);
    }
  });
});

describe('GrowthBook as a reference', () => {
  it('the posterior rule at one look is GrowthBook’s fixed-horizon power with its relative-lift variance', () => {
    // GrowthBook packages/shared/src/power/power.ts, run on this case (never copied):
    // powerEstFrequentist({type: 'mean', mean: 10, standardDeviation: 5, effectSize: 0.05}, n = 2 x 2,336, 2 variations,
    // alpha 0.005, one-tailed, not sequential) = 0.7756022859987238. Its variance of the relative lift,
    // sigma^2 / (mu^2 n) + sigma^2 mu_B^2 / (mu^4 n), is Verdict's difference variance with the
    // control's term scaled by (1 + MDE)^2: the same number once that is given as the second arm's variance.
    const question = {
      rule: rule({ minimum_detectable_effect: 0.05 }),
      variantCount: 2,
      baseline: { mean: 10, variance: 25, treatmentVariance: 25 * 1.05 ** 2 },
    };
    expect(powerAtUnits(question, 2336)).toBeCloseTo(0.7756022859987238, 12);
  });
});

describe('mdeAtUnits', () => {
  it('posterior rule: (z_t + z_p) sqrt(2 sigma^2 / n) / mu (SciPy case 3: 0.024165024491684443)', () => {
    expect(mdeAtUnits({ rule: rule({}), weights: equal, metric: continuous }, 10_000)).toBeCloseTo(0.024165024491684443, 7);
  });

  it('is the MDE whose estimate is the sample: power at the MDE found is 80%', () => {
    const settings = rule({ method: 'frequentist.sequential_msprt' });
    const mde = mdeAtUnits({ rule: settings, weights: equal, metric: rate(0.05) }, 200_000) as number;
    const question = { rule: { ...settings, minimum_detectable_effect: mde }, variantCount: 2, baseline: binaryBaseline(0.05, mde) };
    expect(powerAtUnits(question, 200_000)).toBeCloseTo(0.8, 6);
  });

  it('is null when nothing can be detected', () => {
    expect(mdeAtUnits({ rule: rule({}), weights: equal, metric: { mean: 0, variance: 1, binary: false } }, 1000)).toBeNull();
    expect(mdeAtUnits({ rule: rule({}), weights: equal, metric: continuous }, 0)).toBeNull();
  });
});

describe('planMetric', () => {
  it('days needed: the total units of every arm over the daily traffic, rounded up', () => {
    const plan = planMetric({ rule: rule({ minimum_detectable_effect: 0.05 }), weights: equal, metric: continuous, dailyUnits: 1000, horizonDays: 10 });
    expect(plan.units_per_variant).toBe(2336);
    expect(plan.total_units).toBe(4672);
    expect(plan.days_needed).toBe(5);
    // Power crosses 80% on the day the smallest arm passes the estimate: day 5 holds 2,500 per arm.
    expect(plan.power_by_day[3]?.power).toBeLessThan(0.8);
    expect(plan.power_by_day[4]?.power).toBeGreaterThanOrEqual(0.8);
    expect(plan.mde_by_day[4]?.mde).toBeLessThanOrEqual(0.05);
    expect(plan.mde_by_day[3]?.mde).toBeGreaterThan(0.05);
    expect(plan.mde_by_day).toHaveLength(10);
  });

  it('a zero-weight treatment gets no units and no share of alpha', () => {
    const settings = rule({ method: 'frequentist.sequential_msprt', minimum_detectable_effect: 0.1 });
    const withIdle = planMetric({ rule: settings, weights: { control: 50, treatments: [50, 0] }, metric: rate(0.1), dailyUnits: 500, horizonDays: 3 });
    const two = planMetric({ rule: settings, weights: equal, metric: rate(0.1), dailyUnits: 500, horizonDays: 3 });
    expect(withIdle).toEqual(two);
  });

  it('without traffic: units but no days and no series', () => {
    const plan = planMetric({ rule: rule({}), weights: equal, metric: rate(0.1), dailyUnits: null, horizonDays: 28 });
    expect(plan.units_per_variant).toBeGreaterThan(0);
    expect(plan.days_needed).toBeNull();
    expect(plan.power_by_day).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { analyzeBinaryMetric, analyzeNumericMetric } from './analyze.js';
import { decide, resolveDecisionRule } from './decision.js';

describe('analyzeBinaryMetric', () => {
  it('produces VariantPosterior fields for PostHog 286/2014 vs 267/2031', () => {
    // Source: PostHog test_experiment_result.py (successes/failures): P(test best) 0.802278, loss 0.0010,
    // CIs control [0.1037, 0.1299], test [0.1114, 0.1384].
    const [control, test] = analyzeBinaryMetric([
      { variant_key: 'control', is_control: true, units: 267 + 2031, conversions: 267 },
      { variant_key: 'test', is_control: false, units: 286 + 2014, conversions: 286 },
    ]);
    expect(control?.posterior.credible_interval_95?.[0]).toBeCloseTo(0.1037, 3);
    expect(test?.posterior.credible_interval_95?.[1]).toBeCloseTo(0.1384, 3);
    expect(Math.abs((test?.prob_best as number) - 0.802278)).toBeLessThan(1e-6);
    expect(Math.abs((test?.expected_loss_if_stop_now as number) - 0.001)).toBeLessThan(5e-4);
    expect(test).toMatchObject({ sample_size: 2300, conversions: 286, observed_rate: 286 / 2300 });
    expect(test?.unit_variance).toBeCloseTo((286 / 2300) * (1 - 286 / 2300), 12);
  });

  it('feeds decide() directly', () => {
    const variants = analyzeBinaryMetric([
      { variant_key: 'control', is_control: true, units: 30_000, conversions: 3000 },
      { variant_key: 'treatment', is_control: false, units: 30_000, conversions: 3300 },
    ]);
    expect(decide({ variants, rule: resolveDecisionRule({}), days_elapsed: 3 })).toMatchObject({
      satisfied: true,
      verdict: 'winner',
      variant_key: 'treatment',
    });
  });
});

describe('analyzeNumericMetric', () => {
  it('gives normal posteriors and exact two-arm comparisons', () => {
    // Control values mean 2, s^2 = 4; treatment mean 2.5, s^2 = 4 (100 units each, built from sums).
    const sums = (n: number, mean: number, variance: number): { sum: number; sum_of_squares: number } => ({
      sum: n * mean,
      sum_of_squares: variance * (n - 1) + n * mean * mean,
    });
    const [control, treatment] = analyzeNumericMetric([
      { variant_key: 'control', is_control: true, units: 100, ...sums(100, 2, 4) },
      { variant_key: 'treatment', is_control: false, units: 100, ...sums(100, 2.5, 4) },
    ]);
    expect(control?.posterior.mean).toBeCloseTo(2, 12);
    expect(treatment?.unit_variance).toBeCloseTo(4, 10);
    // P(treatment best) = Phi(0.5 / sqrt(0.04 + 0.04)) = Phi(1.76777) = 0.961450 (scipy.stats.norm.cdf).
    expect(Math.abs((treatment?.prob_best as number) - 0.9614501)).toBeLessThan(1e-6);
  });

  it('leaves the interval, prob_best and loss null while any variant has fewer than 2 units', () => {
    const [control, treatment] = analyzeNumericMetric([
      { variant_key: 'control', is_control: true, units: 1, sum: 3, sum_of_squares: 9 },
      { variant_key: 'treatment', is_control: false, units: 50, sum: 100, sum_of_squares: 400 },
    ]);
    expect(control?.posterior.credible_interval_95).toBeNull();
    expect(treatment?.posterior.credible_interval_95).not.toBeNull();
    expect(treatment?.prob_best).toBeNull();
    expect(treatment?.expected_loss_if_stop_now).toBeNull();
  });
});

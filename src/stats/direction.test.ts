import { describe, expect, it } from 'vitest';
import { analyzeBinaryMetric, analyzeNumericMetric } from './analyze.js';
import { decide, resolveDecisionRule } from './decision.js';
import type { DecisionMethod } from './types.js';

/**
 * A lower-is-better metric (errors, churn, load time): docs/metrics.md "Direction" reads "best" as the
 * lowest value in prob_best, the loss, chance_to_beat_control and every decision rule.
 */
const errorRates = (higherIsBetter: boolean) =>
  analyzeBinaryMetric(
    [
      { variant_key: 'control', is_control: true, units: 30_000, conversions: 3000 },
      { variant_key: 'fewer-errors', is_control: false, units: 30_000, conversions: 2600 },
    ],
    { higherIsBetter },
  );

const sums = (n: number, mean: number, variance: number) => ({ units: n, sum: n * mean, sum_of_squares: variance * (n - 1) + n * mean * mean });
const loadTimes = (higherIsBetter: boolean) =>
  analyzeNumericMetric(
    [
      { variant_key: 'control', is_control: true, ...sums(30_000, 2.0, 1.0) },
      { variant_key: 'faster', is_control: false, ...sums(30_000, 1.9, 1.0) },
    ],
    { higherIsBetter },
  );

const METHODS: DecisionMethod[] = ['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt'];

describe('a lower-is-better metric', () => {
  it.each([
    ['binary', errorRates],
    ['numeric', loadTimes],
  ] as const)('%s: prob_best, the loss and chance_to_beat_control favour the lower variant', (_kind, analyze) => {
    const [control, treatment] = analyze(false);
    const [controlUp, treatmentUp] = analyze(true);
    expect(treatment?.prob_best).toBeGreaterThan(0.999);
    expect(control?.prob_best).toBeLessThan(0.001);
    expect(treatment?.expected_loss_if_stop_now).toBeLessThan(control?.expected_loss_if_stop_now as number);
    // The loss of the higher (worse) control is about its excess over the treatment.
    expect(control?.expected_loss_if_stop_now).toBeCloseTo((control?.observed_rate as number) - (treatment?.observed_rate as number), 3);
    expect(controlUp?.expected_loss_if_stop_now).toBeLessThan(1e-4);
    expect(treatment?.effect?.chance_to_beat_control).toBeGreaterThan(0.999);
    expect(treatmentUp?.effect?.chance_to_beat_control).toBeLessThan(0.001);
    expect(treatment?.effect?.absolute.mean).toBeLessThan(0);
    expect(treatmentUp?.prob_best).toBeCloseTo(control?.prob_best as number, 9);
  });

  it.each(
    METHODS.flatMap(
      (method) =>
        [
          ['binary', method],
          ['numeric', method],
        ] as const,
    ),
  )('%s: %s declares the lower variant the winner', (kind, method) => {
    const analyses = kind === 'binary' ? errorRates(false) : loadTimes(false);
    const rule = resolveDecisionRule({ method, posterior_threshold: 0.95, min_sample_per_variant: 1000 });
    const decision = decide({ variants: analyses, rule, days_elapsed: 3, higher_is_better: false });
    expect(decision).toMatchObject({ verdict: 'winner', variant_key: kind === 'binary' ? 'fewer-errors' : 'faster' });
    // Read as higher-is-better, the same data make the control the winner.
    const upward = decide({ variants: kind === 'binary' ? errorRates(true) : loadTimes(true), rule, days_elapsed: 3, higher_is_better: true });
    expect(upward).toMatchObject({ verdict: 'winner', variant_key: 'control' });
  });
});

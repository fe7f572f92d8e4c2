import normalRandom from '@stdlib/random-base-normal';
import { describe, expect, it } from 'vitest';
import { cupedAdjust, gaussianMixtureTest } from '../../../stats/index.js';
import { buildSnapshot, type BuildInput } from './build.js';
import { metricRow } from '../../../../test/support/metric-row.js';
import type { MetricTotals, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';

const DAY = 24 * 60 * 60 * 1000;

const revenue = metricRow({ id: 'm-rev', key: 'revenue', name: 'Revenue', kind: 'revenue', aggregation: 'sum', property_path: 'amount' });

/** Seeded units whose value is mostly their pre-period value (correlation about 0.95), plus a lift. */
function totalsOf(draw: () => number, n: number, lift: number): MetricTotals {
  const totals = { ...EMPTY_TOTALS };
  for (let i = 0; i < n; i += 1) {
    const x = 20 + 5 * draw();
    const y = x + 1.5 * draw() + lift;
    totals.n += 1;
    totals.sum += y;
    totals.sum_of_squares += y * y;
    totals.conversions += 1;
    totals.pre_sum += x;
    totals.pre_sum_of_squares += x * x;
    totals.pre_cross += x * y;
  }
  return totals;
}

describe('buildSnapshot with CUPED', () => {
  const draw = normalRandom.factory(0, 1, { seed: 5 });
  const control = totalsOf(draw, 3000, 0);
  const treatment = totalsOf(draw, 3000, 0.25);
  const totals = new Map<string, VariantTotals>([
    ['control', { variant_key: 'control', units: 3000, metrics: [control] }],
    ['treatment', { variant_key: 'treatment', units: 3000, metrics: [treatment] }],
  ]);
  const input = (cuped: BuildInput['cuped']): BuildInput => ({
    variants: [
      { id: '1', key: 'control', weight: 50, is_control: true },
      { id: '2', key: 'treatment', weight: 50, is_control: false },
    ],
    decisionRule: { method: 'bayesian.always_valid_evalue', posterior_threshold: 0.95, min_sample_per_variant: 1000 },
    startedAt: 0,
    stoppedAt: null,
    computedAt: 3 * DAY,
    primary: revenue,
    guardrails: [],
    totals,
    previous: null,
    cuped,
  });

  it('decides on the adjusted statistics: the lift the raw values hide is found, with the adjusted moments’ p-value', () => {
    const plain = buildSnapshot(input(null));
    const adjusted = buildSnapshot(input({ lookback_days: 14 }));
    expect(plain.decision.verdict).toBe('keep_running');
    expect(adjusted.decision.verdict).toBe('winner');
    expect(adjusted.decision.variant_key).toBe('treatment');
    const cuped = cupedAdjust(
      [control, treatment].map((t) => ({ n: t.n, sumY: t.sum, sumYY: t.sum_of_squares, sumX: t.pre_sum, sumXX: t.pre_sum_of_squares, sumXY: t.pre_cross })),
    );
    const [c, t] = cuped?.arms ?? [];
    const expected = gaussianMixtureTest(
      { n: 3000, mean: c?.mean ?? 0, variance: c?.unitVariance ?? 0 },
      { n: 3000, mean: t?.mean ?? 0, variance: t?.unitVariance ?? 0 },
      { alpha: 0.05, tuningSampleSize: 2000 },
    );
    expect(adjusted.decision.always_valid_p_values?.treatment).toBeCloseTo(expected.pValue, 12);
    expect(adjusted.primary_cuped).toMatchObject({
      applied: true,
      lookback_days: 14,
      theta: cuped?.theta,
      variance_reduction: cuped?.varianceReduction,
      // A correlation of about 0.95 removes most of the variance: nothing to warn about.
      note: null,
    });
    // prob_best and the effect read the adjusted posterior; observed_rate stays the raw mean.
    expect(adjusted.per_variant[1]?.posterior.mean).toBeCloseTo(t?.mean ?? 0, 12);
    expect(adjusted.per_variant[1]?.observed_rate).toBeCloseTo(treatment.sum / treatment.n, 12);
    expect(adjusted.per_variant[1]?.effect?.chance_to_beat_control).toBeGreaterThan(plain.per_variant[1]?.effect?.chance_to_beat_control ?? 1);
    expect(adjusted.per_variant[1]?.prob_best).toBeGreaterThan(0.999);
  });

  it('says when the reduction is negligible: a pre-period that barely predicts the metric', () => {
    // Pre-period values independent of the metric: θ is near 0 and so is the reduction.
    const noise = normalRandom.factory(0, 1, { seed: 9 });
    const unrelated = (base: MetricTotals): MetricTotals => {
      const totals = { ...base, pre_sum: 0, pre_sum_of_squares: 0, pre_cross: 0 };
      const mean = base.sum / base.n;
      for (let i = 0; i < base.n; i += 1) {
        const x = 20 + 5 * noise();
        totals.pre_sum += x;
        totals.pre_sum_of_squares += x * x;
        totals.pre_cross += x * mean;
      }
      return totals;
    };
    const weak = new Map<string, VariantTotals>([...totals].map(([key, value]) => [key, { ...value, metrics: value.metrics.map(unrelated) }]));
    const built = buildSnapshot({ ...input({ lookback_days: 14 }), totals: weak });
    expect(built.primary_cuped?.applied).toBe(true);
    expect(built.primary_cuped?.variance_reduction).toBeLessThan(0.02);
    expect(built.primary_cuped?.note).toMatch(/^applied, but it removed only \d+\.\d% of the variance \(under 2%\)/);
  });

  it('falls back to the usual analysis, saying why, when no unit had pre-period data', () => {
    const flat = new Map<string, VariantTotals>(
      [...totals].map(([key, value]) => [key, { ...value, metrics: value.metrics.map((m) => ({ ...m, pre_sum: 0, pre_sum_of_squares: 0, pre_cross: 0 })) }]),
    );
    const built = buildSnapshot({ ...input({ lookback_days: 14 }), totals: flat });
    expect(built.primary_cuped).toMatchObject({ applied: false, theta: null, variance_reduction: null });
    expect(built.per_variant).toEqual(buildSnapshot({ ...input(null), totals: flat }).per_variant);
  });
});

import { describe, expect, it } from 'vitest';
import { betaPosterior } from './beta.js';
import { binaryEffect, normalEffect } from './effect.js';
import { normalMeanPosterior } from './normal.js';

/**
 * Reference quantiles of T - C and T / C - 1 for T, C independent Beta(1 + conversions,
 * 1 + units - conversions): `python3 scripts/reference/beta_effects.py` (SciPy 1.17 adaptive
 * quad + brentq, independent of the Gauss-Legendre code under test). Exact, so 1e-7 here.
 */
const BETA_REFERENCES = [
  {
    name: 'PostHog 267/2298 vs 286/2300',
    counts: [267, 2298, 286, 2300],
    diff: [-0.0106579803, 0.026973891],
    relative: [-0.0846427476, 0.2513292794],
    above: 0.8022775951,
  },
  { name: 'small 3/20 vs 9/25', counts: [3, 20, 9, 25], diff: [-0.0563567556, 0.4212435226], relative: [-0.1821253026, 6.1973946641], above: 0.936732209 },
  {
    name: 'large 10000/100000 vs 10400/100000',
    counts: [10000, 100000, 10400, 100000],
    diff: [0.0013472219, 0.0066528044],
    relative: [0.0132957865, 0.0674081956],
    above: 0.9984384004,
  },
  {
    name: 'control without conversions 0/50 vs 5/50',
    counts: [0, 50, 5, 50],
    diff: [0.0116146108, 0.1993457141],
    relative: [0.2300581452, 231.0701976896],
    above: 0.9866254667,
  },
  {
    name: 'unequal widths 50/500 vs 5000/50000',
    counts: [50, 500, 5000, 50000],
    diff: [-0.029555776, 0.0234265726],
    relative: [-0.22857685, 0.3048373185],
    above: 0.4688414014,
  },
] as const;

function closeRelative(actual: number | undefined, expected: number, tolerance: number): void {
  expect(Math.abs((actual as number) - expected) / Math.max(1, Math.abs(expected))).toBeLessThan(tolerance);
}

describe('binaryEffect', () => {
  it.each(BETA_REFERENCES)('matches SciPy for $name', ({ counts, diff, relative, above }) => {
    const [cc, cn, tc, tn] = counts;
    const effect = binaryEffect(betaPosterior(cc, cn), betaPosterior(tc, tn));
    closeRelative(effect.absolute.credible_interval_95[0], diff[0], 1e-7);
    closeRelative(effect.absolute.credible_interval_95[1], diff[1], 1e-7);
    closeRelative(effect.relative.credible_interval_95?.[0], relative[0], 1e-7);
    closeRelative(effect.relative.credible_interval_95?.[1], relative[1], 1e-7);
    closeRelative(effect.chance_to_beat_control, above, 1e-7);
  });

  it('reports the posterior means: E[T] - E[C] and E[T] E[1/C] - 1', () => {
    // Beta(4, 18) control, Beta(10, 17) treatment: E[1/C] = (4 + 18 - 1) / (4 - 1) = 7.
    const effect = binaryEffect(betaPosterior(3, 20), betaPosterior(9, 25));
    expect(effect.absolute.mean).toBeCloseTo(10 / 27 - 4 / 22, 14);
    expect(effect.relative.mean).toBeCloseTo((10 / 27) * 7 - 1, 14);
  });

  it('has no relative mean while the control has no conversion (E[1/C] is infinite)', () => {
    expect(binaryEffect(betaPosterior(0, 50), betaPosterior(5, 50)).relative.mean).toBeNull();
  });

  it('reads the chance to beat control as the chance to be lower when lower is better', () => {
    const higher = binaryEffect(betaPosterior(267, 2298), betaPosterior(286, 2300), true);
    const lower = binaryEffect(betaPosterior(267, 2298), betaPosterior(286, 2300), false);
    expect(lower.chance_to_beat_control).toBeCloseTo(1 - 0.8022775951, 9);
    expect(lower.absolute).toEqual(higher.absolute);
    expect(lower.relative).toEqual(higher.relative);
  });

  it('is deterministic and fast enough for every variant pair of a snapshot', () => {
    const started = performance.now();
    const first = binaryEffect(betaPosterior(31_000, 1_000_000), betaPosterior(31_500, 1_000_000));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(binaryEffect(betaPosterior(31_000, 1_000_000), betaPosterior(31_500, 1_000_000))).toEqual(first);
  });
});

describe('normalEffect', () => {
  // gbstats test_frequentist.py TestTwoSidedTTest: stat_a SampleMeanStatistic(sum=1396.87,
  // sum_squares=52377.9767, n=3407), stat_b (2422.7, 134698.29, 3461); relative uplift
  // Uplift("normal", 0.70732, 0.37879) (5 decimals, published). gbstats' interval uses a t
  // quantile; Verdict's posterior uses z = 1.959964 (docs/statistics.md "What the analysis promises"),
  // so the interval is mean +- z sd.
  const control = normalMeanPosterior({ n: 3407, sum: 1396.87, sumOfSquares: 52377.9767 });
  const treatment = normalMeanPosterior({ n: 3461, sum: 2422.7, sumOfSquares: 134698.29 });
  const effect = normalEffect(
    { mean: control.mean, variance: control.varianceOfMean as number },
    { mean: treatment.mean, variance: treatment.varianceOfMean as number },
  );

  it('gives the gbstats delta-method relative uplift', () => {
    expect(effect.relative.mean).toBeCloseTo(0.70732, 5);
    const [low, high] = effect.relative.credible_interval_95 as [number, number];
    expect((high - low) / (2 * 1.959964)).toBeCloseTo(0.37879, 5);
    // SciPy: scipy.stats.norm.ppf(0.975) with the same mean and sd: [-0.0351062332, 1.4497403796].
    expect(low).toBeCloseTo(-0.0351062332, 8);
    expect(high).toBeCloseTo(1.4497403796, 8);
  });

  it('gives the exact normal difference and P(T > C)', () => {
    // SciPy: d = 0.29, sd = sqrt(v_t + v_c); norm.ppf / norm.cdf: [0.0454285762, 0.5345714238], 0.9899378629.
    expect(effect.absolute.mean).toBeCloseTo(0.29, 12);
    expect(effect.absolute.credible_interval_95[0]).toBeCloseTo(0.0454285762, 9);
    expect(effect.absolute.credible_interval_95[1]).toBeCloseTo(0.5345714238, 9);
    expect(effect.chance_to_beat_control).toBeCloseTo(0.9899378629, 9);
  });

  it('flips the chance for a lower-is-better metric and has no relative effect on a zero control', () => {
    const lower = normalEffect({ mean: 1, variance: 0.01 }, { mean: 0.8, variance: 0.01 }, false);
    expect(lower.chance_to_beat_control).toBeGreaterThan(0.9);
    expect(normalEffect({ mean: 0, variance: 0.01 }, { mean: 0.8, variance: 0.01 }).relative).toEqual({ mean: null, credible_interval_95: null });
  });
});

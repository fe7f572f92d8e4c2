import { describe, expect, it } from 'vitest';
import { banditExpectedUnits, banditUpdate, flooredWeights, stratifiedEstimates, thompsonProbBest, toIntegerPercentages } from './bandit.js';
import { probGreaterNormal } from './normal.js';
import { sampleRatioMismatch } from './srm.js';

const sum = (values: number[]) => values.reduce((total, x) => total + x, 0);

/**
 * GrowthBook gbstats test_gbstats.py `TestBanditMinVariationWeightFloor`: four arms of n = 1000 with
 * sums 10/20/30/300 and sums of squares 2000/2000/2000/20000 (one dominant arm), seed 100.
 * As normal posteriors N(sum / n, s² / n) under the flat prior gbstats' BanditConfig uses:
 */
const GROWTHBOOK_FLOOR_CASE = [
  { mean: 0.01, variance: (2000 - (10 * 10) / 1000) / 999 / 1000 },
  { mean: 0.02, variance: (2000 - (20 * 20) / 1000) / 999 / 1000 },
  { mean: 0.03, variance: (2000 - (30 * 30) / 1000) / 999 / 1000 },
  { mean: 0.3, variance: (20000 - (300 * 300) / 1000) / 999 / 1000 },
];
/**
 * Exact P(best) of that case, ∫ φ_i(x) Π_{j≠i} Φ_j(x) dx by scipy.integrate.quad (SciPy 1.17).
 * gbstats' own 10,000 seeded draws give best_arm_probabilities 0.0113/0.0156/0.0195/0.9536
 * (BanditsSimple(...).compute_result(), run from the repository at 8f1db44569), within its Monte
 * Carlo error of these.
 */
const GROWTHBOOK_FLOOR_CASE_EXACT = [0.011032752409628995, 0.0156276546140213, 0.021718637150949193, 0.9516209558254012];

describe('flooredWeights: f + (1 - K f) p (gbstats bandits.py additive floor)', () => {
  it('every arm gets at least the floor, the weights sum to 1 and follow p_i = f + (1 - K f) w_i', () => {
    // gbstats test_floor_is_additive_on_the_simplex, with f = 0.1 and K = 4.
    const weights = flooredWeights(GROWTHBOOK_FLOOR_CASE_EXACT, 0.1);
    expect(Math.min(...weights)).toBeGreaterThanOrEqual(0.1 - 1e-12);
    expect(sum(weights)).toBeCloseTo(1, 12);
    weights.forEach((w, i) => expect(w).toBeCloseTo(0.1 + 0.6 * (GROWTHBOOK_FLOOR_CASE_EXACT[i] as number), 12));
  });

  it('a floor of 0 is pure Thompson sampling and a negative floor acts as 0', () => {
    // gbstats test_zero_floor_is_pure_thompson and test_negative_floor_is_clamped_to_zero.
    const pure = flooredWeights([0.2, 0.3, 0.5], 0);
    expect(pure).toEqual([0.2, 0.3, 0.5]);
    expect(flooredWeights([0.2, 0.3, 0.5], -0.3)).toEqual(pure);
  });

  it('falls back to the uniform split when K f >= 1 (gbstats test_floor_too_large_falls_back_to_uniform)', () => {
    expect(flooredWeights(GROWTHBOOK_FLOOR_CASE_EXACT, 0.5)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(flooredWeights([0.99, 0.01], 0.5)).toEqual([0.5, 0.5]);
  });
});

describe('toIntegerPercentages: largest remainder, none below the floor', () => {
  it('sums to 100 and rounds by largest remainder', () => {
    // 100 w = 10.66/10.94/11.30/67.10 over a 10% floor: 10/10/11/67 plus the two largest remainders.
    const percentages = toIntegerPercentages(flooredWeights(GROWTHBOOK_FLOOR_CASE_EXACT, 0.1), 0.1);
    expect(percentages).toEqual([11, 11, 11, 67]);
    expect(toIntegerPercentages([1, 1, 1])).toEqual([34, 33, 33]);
  });

  it('a floor of 0.5 with two arms gives 50/50', () => {
    expect(
      banditUpdate(
        [
          { mean: 0, variance: 1e-6 },
          { mean: 1, variance: 1e-6 },
        ],
        0.5,
        { seed: 1 },
      ).percentages,
    ).toEqual([50, 50]);
  });

  it('keeps every arm at the floor rounded up, even when plain rounding would drop it', () => {
    // 1.5% floor: plain largest remainder of 1.5/1.5/97 gives 2/1/97 or 1/2/97; the floor asks 2.
    expect(toIntegerPercentages([0.015, 0.015, 0.97], 0.015)).toEqual([2, 2, 96]);
    for (let seed = 1; seed <= 200; seed += 1) {
      const raw = Array.from({ length: 2 + (seed % 6) }, (_, i) => ((seed * 7919 + i * 104729) % 1000) / 1000 + 0.0001);
      const floor = (seed % 9) / 100;
      const percentages = toIntegerPercentages(flooredWeights(raw, floor), floor);
      expect(sum(percentages)).toBe(100);
      expect(Math.min(...percentages)).toBeGreaterThanOrEqual(Math.ceil(floor * 100 - 1e-9));
    }
  });

  it('refuses weights that are all 0 or negative', () => {
    expect(() => toIntegerPercentages([0, 0])).toThrow(RangeError);
    expect(() => toIntegerPercentages([0.5, -0.1])).toThrow(RangeError);
  });
});

describe('thompsonProbBest: seeded draws from the posteriors', () => {
  it('is deterministic for a seed and changes with it', () => {
    const posteriors = [
      { mean: 0.05, variance: 1e-5 },
      { mean: 0.052, variance: 1e-5 },
      { mean: 0.049, variance: 1e-5 },
    ];
    const first = thompsonProbBest(posteriors, { seed: 42, draws: 20_000 });
    expect(thompsonProbBest(posteriors, { seed: 42, draws: 20_000 })).toEqual(first);
    expect(thompsonProbBest(posteriors, { seed: 43, draws: 20_000 })).not.toEqual(first);
    expect(sum(first)).toBeCloseTo(1, 12);
  });

  it('matches the exact two-arm P(best) within Monte Carlo error', () => {
    const a = { mean: 0.1, variance: 0.0004 };
    const b = { mean: 0.13, variance: 0.0003 };
    const exact = probGreaterNormal(a, b); // Phi(0.03 / sqrt(0.0007)) = 0.8716
    const draws = 100_000;
    const standardError = Math.sqrt((exact * (1 - exact)) / draws);
    const [pa, pb] = thompsonProbBest([a, b], { seed: 7, draws });
    expect(Math.abs((pb as number) - exact)).toBeLessThan(4 * standardError);
    expect(pa as number).toBeCloseTo(1 - (pb as number), 12);
    // Lower is better: the roles swap.
    const [lowerA] = thompsonProbBest([a, b], { seed: 7, draws, higherIsBetter: false });
    expect(Math.abs((lowerA as number) - exact)).toBeLessThan(4 * standardError);
  });

  it('reproduces the exact P(best) of GrowthBook’s four-arm floor case within Monte Carlo error', () => {
    const draws = 100_000;
    const probBest = thompsonProbBest(GROWTHBOOK_FLOOR_CASE, { seed: 100, draws });
    probBest.forEach((p, i) => {
      const exact = GROWTHBOOK_FLOOR_CASE_EXACT[i] as number;
      expect(Math.abs(p - exact)).toBeLessThan(4 * Math.sqrt((exact * (1 - exact)) / draws));
    });
    // and therefore the same 10% floored split, to the percent
    expect(banditUpdate(GROWTHBOOK_FLOOR_CASE, 0.1, { seed: 100, draws }).percentages).toEqual([11, 11, 11, 67]);
  });
});

describe('stratifiedEstimates: Σ_p w_p x̄_vp and Σ_p w_p² s²_vp / n_vp, w_p = N_p / N', () => {
  // Simpson's paradox: the treatment converts better in both periods (15% vs 10%, then 6% vs 5%),
  // but got 90% of the traffic in the worse second period, so pooled rates nearly tie (9.17% vs 9.21%).
  const control = [
    { n: 1000, sum: 100, sumOfSquares: 100 },
    { n: 200, sum: 10, sumOfSquares: 10 },
  ];
  const treatment = [
    { n: 1000, sum: 150, sumOfSquares: 150 },
    { n: 1800, sum: 108, sumOfSquares: 108 },
  ];

  it('weighs every variant by the same period mix (reference numbers by hand in numpy)', () => {
    const [c, t] = stratifiedEstimates([control, treatment]);
    // N_1 = N_2 = 2000: w = 1/2 each. Control 0.5·0.10 + 0.5·0.05; treatment 0.5·0.15 + 0.5·0.06.
    expect(c?.mean).toBeCloseTo(0.075, 12);
    expect(t?.mean).toBeCloseTo(0.105, 12);
    expect(c?.varianceOfMean).toBeCloseTo(8.219588935669337e-5, 15);
    expect(t?.varianceOfMean).toBeCloseTo(3.974459451113148e-5, 15);
    expect([c?.n, t?.n]).toEqual([1200, 2800]);
  });

  it('equals the pooled estimate when there is one period', () => {
    const [only] = stratifiedEstimates([[{ n: 1000, sum: 100, sumOfSquares: 100 }]]);
    expect(only?.mean).toBeCloseTo(0.1, 12);
    expect(only?.varianceOfMean).toBeCloseTo((0.1 * 0.9 * 1000) / 999 / 1000, 15);
  });

  it('leaves out a period in which a variant has no units; one unit adds no variance term; no variance below 2 units', () => {
    const [a, b] = stratifiedEstimates([
      [
        { n: 100, sum: 10, sumOfSquares: 10 },
        { n: 100, sum: 30, sumOfSquares: 30 },
      ],
      [
        { n: 0, sum: 0, sumOfSquares: 0 },
        { n: 1, sum: 1, sumOfSquares: 1 },
      ],
    ]);
    expect(a?.mean).toBeCloseTo((100 / 201) * 0.1 + (101 / 201) * 0.3, 12);
    expect(b).toEqual({ n: 1, mean: 1, varianceOfMean: null });
    const [c] = stratifiedEstimates([
      [
        { n: 1, sum: 1, sumOfSquares: 1 },
        { n: 3, sum: 1, sumOfSquares: 1 },
      ],
    ]);
    // w = 1/4 and 3/4; only the second cell has a variance, s² = 1/3.
    expect(c?.mean).toBeCloseTo(0.25 + 0.75 / 3, 12);
    expect(c?.varianceOfMean).toBeCloseTo((0.75 ** 2 * (1 / 3)) / 3, 12);
  });
});

describe('banditExpectedUnits: Σ_p N_p w_vp', () => {
  it('expects what each period’s weights send, so a moving split is no mismatch', () => {
    // 1000 units at 50/50, then 2000 at 20/80: expected 500 + 400 and 500 + 1600.
    const expected = banditExpectedUnits(
      [1000, 2000],
      [
        [50, 50],
        [20, 80],
      ],
    );
    expect(expected).toEqual([900, 2100]);
    expect(sampleRatioMismatch([905, 2095], expected).warning).toBe(false);
    // Against the current weights alone the same units look broken.
    expect(sampleRatioMismatch([905, 2095], [20, 80]).warning).toBe(true);
    // A broken split is still one: 1200 / 1800 against 900 / 2100.
    expect(sampleRatioMismatch([1200, 1800], expected).warning).toBe(true);
  });

  it('refuses a period without its weights', () => {
    expect(() => banditExpectedUnits([10], [])).toThrow(RangeError);
  });
});

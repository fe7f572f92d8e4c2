import normalRandom from '@stdlib/random-base-normal';
import { describe, expect, it } from 'vitest';
import { cupedAdjust, cupedTheta, type CupedSums } from './cuped.js';
import { decide, resolveDecisionRule } from './decision.js';
import { Z_975 } from './normal.js';
import type { DecisionRuleSettings, DecisionVariant } from './types.js';

/** The per-unit data of scripts/reference/cuped.py, written out the same way. */
function unit(variant: number, i: number): [x: number, y: number] {
  const x = i % 3 === 0 ? 0 : ((i * 37) % 23) + 0.5 * (i % 4);
  return [x, 0.8 * x + ((i * 53) % 17) + 1.5 * variant];
}

function sumsOf(pairs: ReadonlyArray<[number, number]>): CupedSums {
  const sums = { n: 0, sumY: 0, sumYY: 0, sumX: 0, sumXX: 0, sumXY: 0 };
  for (const [x, y] of pairs) {
    sums.n += 1;
    sums.sumY += y;
    sums.sumYY += y * y;
    sums.sumX += x;
    sums.sumXX += x * x;
    sums.sumXY += x * y;
  }
  return sums;
}

describe('CUPED against NumPy', () => {
  // python3 scripts/reference/cuped.py: OLS slope (numpy.linalg.lstsq) and ddof=1 moments of the
  // per-unit adjusted values, i.e. not the sums formula used here.
  const sizes = [40, 45, 38];
  const arms = sizes.map((n, variant) => sumsOf(Array.from({ length: n }, (_, i) => unit(variant, i))));
  const reference = [
    { mean: 13.469036681801, unitVariance: 23.8900530375396, varianceOfMean: 0.597251325938491, reduction: 0.605538365855126 },
    { mean: 15.1461115538501, unitVariance: 25.6067361946825, varianceOfMean: 0.569038582104056, reduction: 0.599546625558714 },
    { mean: 16.3885134948606, unitVariance: 24.9907687522926, varianceOfMean: 0.657651809270857, reduction: 0.605881490767789 },
  ];

  it('matches theta, the adjusted means and variances and the variance reduction', () => {
    const result = cupedAdjust(arms);
    expect(result).not.toBeNull();
    expect(result?.theta).toBeCloseTo(0.815484852661988, 12);
    expect(result?.varianceReduction).toBeCloseTo(0.603655494060543, 12);
    result?.arms.forEach((arm, index) => {
      const expected = reference[index] as (typeof reference)[number];
      expect(arm.mean).toBeCloseTo(expected.mean, 11);
      expect(arm.unitVariance).toBeCloseTo(expected.unitVariance, 10);
      expect(arm.varianceOfMean).toBeCloseTo(expected.varianceOfMean, 12);
      expect(arm.varianceReduction).toBeCloseTo(expected.reduction, 12);
    });
  });

  it('adjusts nothing when the covariate has no variance (no unit had pre-period data)', () => {
    const flat = [
      sumsOf([
        [0, 1],
        [0, 2],
        [0, 4],
      ]),
      sumsOf([
        [0, 3],
        [0, 5],
      ]),
    ];
    expect(cupedTheta(flat)).toBeNull();
    expect(cupedAdjust(flat)).toBeNull();
    expect(cupedAdjust([sumsOf([[1, 2]])])).toBeNull();
  });

  it('leaves a one-unit arm without a variance but still adjusts its mean', () => {
    const result = cupedAdjust([
      sumsOf([
        [0, 1],
        [2, 3],
        [4, 4],
      ]),
      sumsOf([[3, 5]]),
    ]);
    expect(result?.arms[1]?.unitVariance).toBeNull();
    expect(result?.arms[1]?.mean).toEqual(expect.any(Number));
  });
});

/**
 * Seeded simulation: units with a pre-period covariate x and a metric y, jointly normal with
 * correlation 0.7 (y = 10 + 0.7 z1 + sqrt(1 - 0.49) z2, x = z1), two arms with the same
 * distribution (A/A).
 */
function drawUnits(draw: () => number, n: number): CupedSums {
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < n; i += 1) {
    const z1 = draw();
    pairs.push([z1, 10 + 0.7 * z1 + Math.sqrt(1 - 0.49) * draw()]);
  }
  return sumsOf(pairs);
}

function add(a: CupedSums, b: CupedSums): CupedSums {
  return { n: a.n + b.n, sumY: a.sumY + b.sumY, sumYY: a.sumYY + b.sumYY, sumX: a.sumX + b.sumX, sumXX: a.sumXX + b.sumXX, sumXY: a.sumXY + b.sumXY };
}

function unadjustedVariance(sums: CupedSums): number {
  return (sums.sumYY - (sums.sumY * sums.sumY) / sums.n) / (sums.n - 1);
}

describe('CUPED simulation (correlation 0.7)', () => {
  it('narrows the 95% interval of the difference by about 1 - sqrt(1 - 0.49) and keeps A/A coverage at 94-96%', () => {
    const draw = normalRandom.factory(0, 1, { seed: 17 });
    const reps = 2000;
    const n = 400;
    let covered = 0;
    let widthRatio = 0;
    for (let rep = 0; rep < reps; rep += 1) {
      const arms = [drawUnits(draw, n), drawUnits(draw, n)];
      const result = cupedAdjust(arms);
      const [control, treatment] = result?.arms ?? [];
      if (!control?.varianceOfMean || !treatment?.varianceOfMean) throw new Error('no adjusted variance');
      const half = Z_975 * Math.sqrt(control.varianceOfMean + treatment.varianceOfMean);
      if (Math.abs(treatment.mean - control.mean) <= half) covered += 1;
      const unadjusted = Z_975 * Math.sqrt(arms.reduce((sum, arm) => sum + unadjustedVariance(arm) / arm.n, 0));
      widthRatio += half / unadjusted / reps;
    }
    const coverage = covered / reps;
    expect(coverage).toBeGreaterThanOrEqual(0.94);
    expect(coverage).toBeLessThanOrEqual(0.96);
    // 1 - sqrt(1 - rho^2) = 0.2859: the interval is 71.4% as wide.
    expect(1 - widthRatio).toBeCloseTo(1 - Math.sqrt(1 - 0.49), 2);
  });

  function decisionVariant(key: string, isControl: boolean, sums: CupedSums, arm: { mean: number; unitVariance: number | null }): DecisionVariant {
    return { variant_key: key, is_control: isControl, sample_size: sums.n, observed_rate: arm.mean, unit_variance: arm.unitVariance ?? 0, prob_best: null };
  }

  it.each(['bayesian.always_valid_evalue', 'frequentist.sequential_msprt'] as const)(
    'keeps the false-positive rate of %s at or below alpha under continuous monitoring with CUPED on',
    (method) => {
      const rule: DecisionRuleSettings = resolveDecisionRule({
        method,
        posterior_threshold: 0.95,
        min_sample_per_variant: 2500,
        minimum_detectable_effect: 0.02,
        max_duration_days: 1000,
      });
      const draw = normalRandom.factory(0, 1, { seed: method === 'frequentist.sequential_msprt' ? 29 : 31 });
      const reps = 400;
      let falsePositives = 0;
      for (let rep = 0; rep < reps; rep += 1) {
        let control = drawUnits(draw, 0);
        let treatment = drawUnits(draw, 0);
        let previous: Record<string, number> | undefined;
        for (let look = 0; look < 20; look += 1) {
          control = add(control, drawUnits(draw, 250));
          treatment = add(treatment, drawUnits(draw, 250));
          const result = cupedAdjust([control, treatment]);
          if (!result) throw new Error('no theta');
          const variants = [
            decisionVariant('control', true, control, result.arms[0] as never),
            decisionVariant('treatment', false, treatment, result.arms[1] as never),
          ];
          const decision = decide({ variants, rule, days_elapsed: look, ...(previous ? { previous_p_values: previous } : {}) });
          if (decision.verdict === 'winner') {
            falsePositives += 1;
            break;
          }
        }
      }
      // alpha 0.05; one binomial SE at 400 reps is 1.1 points: the rules are far below it anyway.
      expect(falsePositives / reps).toBeLessThanOrEqual(0.05);
    },
  );
});

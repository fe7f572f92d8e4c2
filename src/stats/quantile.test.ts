import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normalEffect } from './effect.js';
import { quantileEstimate, sampleQuantile } from './quantile.js';

/**
 * Reference: scripts/reference/quantile_delta.py (numpy, seeded) wrote quantile.reference.json:
 * two arms of 200 units with clustered values, numpy.quantile, the paper's interval (Deng, Knoblich
 * and Lu, KDD 2018) computed with numpy, and a bootstrap over units (4000 draws, seed 2018).
 */
interface Estimate {
  value: number;
  sigma: number;
  lower: number;
  upper: number;
  se: number;
}
interface ReferenceCase {
  q: number;
  level: 'event' | 'unit';
  control: Estimate;
  treatment: Estimate;
  relative: number;
  relative_se: number;
  bootstrap: { se_control: number; se_treatment: number; se_relative: number };
}
const reference = JSON.parse(readFileSync(new URL('./quantile.reference.json', import.meta.url), 'utf8')) as {
  control: number[][];
  treatment: number[][];
  cases: ReferenceCase[];
};

function sampleOf(units: number[][], level: 'event' | 'unit') {
  if (level === 'unit') return { values: units.map((values) => values.reduce((sum, value) => sum + value, 0)) };
  return { values: units.flat(), units: units.flatMap((values, unit) => values.map(() => `u${unit}`)) };
}

const close = (actual: number | null | undefined, expected: number) => expect(actual).toBeCloseTo(expected, 9);

describe('sampleQuantile', () => {
  it('interpolates linearly between order statistics as numpy.quantile does', () => {
    // numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], [0.1, 0.5, 0.9, 0.99]) = [1, 3.5, 6.9, 8.79]
    const sorted = Float64Array.from([3, 1, 4, 1, 5, 9, 2, 6]).sort();
    [1, 3.5, 6.9, 8.79].forEach((expected, i) => close(sampleQuantile(sorted, [0.1, 0.5, 0.9, 0.99][i] as number), expected));
    expect(sampleQuantile([7], 0.3)).toBe(7);
    expect(sampleQuantile([], 0.5)).toBeNaN();
  });
});

describe('quantileEstimate', () => {
  for (const item of reference.cases) {
    describe(`q = ${item.q}, ${item.level} level`, () => {
      const control = quantileEstimate(sampleOf(reference.control, item.level), item.q);
      const treatment = quantileEstimate(sampleOf(reference.treatment, item.level), item.q);

      it('gives numpy’s quantile, σ, interval and standard error', () => {
        for (const [estimate, expected] of [
          [control, item.control],
          [treatment, item.treatment],
        ] as const) {
          close(estimate.value, expected.value);
          close(estimate.sigma, expected.sigma);
          close(estimate.interval_95?.[0], expected.lower);
          close(estimate.interval_95?.[1], expected.upper);
          close(estimate.standard_error, expected.se);
        }
        expect(control.units).toBe(200);
      });

      it('has standard errors within 15% of the bootstrap’s over units', () => {
        expect(Math.abs((control.standard_error as number) / item.bootstrap.se_control - 1)).toBeLessThan(0.15);
        expect(Math.abs((treatment.standard_error as number) / item.bootstrap.se_treatment - 1)).toBeLessThan(0.15);
      });

      it('gives the relative difference with the delta method’s interval, close to the bootstrap’s', () => {
        const effect = normalEffect(
          { mean: control.value as number, variance: (control.standard_error as number) ** 2 },
          { mean: treatment.value as number, variance: (treatment.standard_error as number) ** 2 },
        );
        close(effect.relative.mean, item.relative);
        const [low, high] = effect.relative.credible_interval_95 as [number, number];
        close((high - low) / (2 * 1.959963984540054), item.relative_se);
        expect(Math.abs(item.relative_se / item.bootstrap.se_relative - 1)).toBeLessThan(0.15);
      });
    });
  }

  it('ignores how units are spread when each value is its own unit (the clustered σ is then the binomial one, ddof 1)', () => {
    const values = [5, 1, 4, 2, 3, 8, 7, 6, 9, 10];
    const clustered = quantileEstimate({ values, units: values.map((_, i) => String(i)) }, 0.5);
    // S_i in {0, 1}, N_i = 1: Var = p̂ (1 - p̂) / (n - 1), p̂ = 5/10 at the median 5.5.
    close(clustered.sigma, Math.sqrt((0.5 * 0.5) / 9));
    expect(clustered.value).toBe(5.5);
  });

  it('has no interval with fewer than two units, and nothing without values', () => {
    expect(quantileEstimate({ values: [1, 2, 3], units: ['a', 'a', 'a'] }, 0.5)).toMatchObject({ value: 2, units: 1, interval_95: null, standard_error: null });
    expect(quantileEstimate({ values: [4] }, 0.5)).toMatchObject({ value: 4, values: 1, standard_error: null });
    expect(quantileEstimate({ values: [] }, 0.5)).toMatchObject({ value: null, values: 0, units: 0 });
  });
});

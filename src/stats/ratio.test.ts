import { describe, expect, it } from 'vitest';
import { analyzeNormalArms } from './analyze.js';
import { ratioPosterior } from './ratio.js';

describe('ratioPosterior', () => {
  // Per-unit x = [12, 0, 30.5, 7.25, 0, 19, 4, 55], y = [2, 1, 3, 1, 0, 2, 1, 4]:
  // `python3 scripts/reference/ratio_delta.py` (numpy.cov, ddof=1) gives R = 9.125, Var(R) = 2.942784256560e+00.
  const sums = { n: 8, sumX: 127.75, sumY: 14, sumXX: 4528.8125, sumYY: 36, sumXY: 384.75 };

  it('matches the delta method computed from the per-unit arrays', () => {
    const posterior = ratioPosterior(sums);
    expect(posterior.mean).toBeCloseTo(9.125, 12);
    expect(Math.abs((posterior.varianceOfMean as number) / 2.94278425656 - 1)).toBeLessThan(1e-10);
    expect(posterior.unitVariance).toBeCloseTo((posterior.varianceOfMean as number) * 8, 10);
  });

  it('has no variance without a denominator or with one unit', () => {
    expect(ratioPosterior({ ...sums, sumY: 0 })).toEqual({ mean: 0, unitVariance: null, varianceOfMean: null });
    expect(ratioPosterior({ n: 1, sumX: 3, sumY: 2, sumXX: 9, sumYY: 4, sumXY: 6 })).toEqual({ mean: 1.5, unitVariance: null, varianceOfMean: null });
  });

  it('feeds the normal analysis with an effect against the control', () => {
    const posterior = ratioPosterior(sums);
    const [control, treatment] = analyzeNormalArms([
      { variant_key: 'control', is_control: true, sample_size: 8, mean: 8, unit_variance: 20, variance_of_mean: 2.5 },
      {
        variant_key: 'treatment',
        is_control: false,
        sample_size: 8,
        mean: posterior.mean,
        unit_variance: posterior.unitVariance,
        variance_of_mean: posterior.varianceOfMean,
      },
    ]);
    expect(control?.effect).toBeNull();
    expect(treatment?.effect?.absolute.mean).toBeCloseTo(1.125, 12);
    expect(treatment?.effect?.relative.mean).toBeCloseTo(1.125 / 8, 12);
  });
});

import { describe, expect, it } from 'vitest';
import { baselineFromHistory, type HistorySums } from './history-baseline.js';

// Expected values computed here from per-unit arrays with two-pass formulas, not from the sums:
// the ratio's per-unit variance as the sample variance of its linearisation x / y_bar - x_bar y / y_bar^2,
// CUPED's as the sample variance of y - theta (x - x_bar) with theta = Cov(x, y) / Var(x).
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const variance = (values: readonly number[]) => {
  const m = mean(values);
  return values.reduce((total, value) => total + (value - m) ** 2, 0) / (values.length - 1);
};
const covariance = (a: readonly number[], b: readonly number[]) => {
  const ma = mean(a);
  const mb = mean(b);
  return a.reduce((total, value, i) => total + (value - ma) * ((b[i] as number) - mb), 0) / (a.length - 1);
};

function sumsOf(y: readonly number[], x: readonly number[] = [], denominator: readonly number[] = []): HistorySums {
  const total = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  return {
    n: y.length,
    sum: total(y),
    sum_of_squares: total(y.map((v) => v * v)),
    sum_y: total(denominator),
    sum_of_squares_y: total(denominator.map((v) => v * v)),
    sum_xy: total(y.map((v, i) => v * (denominator[i] ?? 0))),
    pre_sum: total(x),
    pre_sum_of_squares: total(x.map((v) => v * v)),
    pre_cross: total(y.map((v, i) => v * (x[i] ?? 0))),
  };
}

const values = Array.from({ length: 50 }, (_, i) => ((i * 37) % 23) + 0.5 * (i % 4));
const covariate = values.map((v, i) => (i % 3 === 0 ? 0 : 0.7 * v + ((i * 11) % 7)));

describe('baselineFromHistory', () => {
  it('binary: the rate and p (1 - p)', () => {
    const converted = Array.from({ length: 40 }, (_, i) => (i % 8 === 0 ? 1 : 0));
    expect(baselineFromHistory('binary', sumsOf(converted), false)).toEqual({
      mean: 5 / 40,
      variance: (5 / 40) * (35 / 40),
      binary: true,
      variance_reduction: null,
    });
  });

  it('revenue: the mean and the sample variance', () => {
    const baseline = baselineFromHistory('revenue', sumsOf(values), false);
    expect(baseline?.mean).toBeCloseTo(mean(values), 12);
    expect(baseline?.variance).toBeCloseTo(variance(values), 10);
    expect(baseline?.binary).toBe(false);
  });

  it('ratio: R and the variance of the linearised per-unit value', () => {
    const denominators = values.map((_, i) => 1 + (i % 5));
    const ybar = mean(denominators);
    const xbar = mean(values);
    const linearised = values.map((x, i) => x / ybar - (xbar * (denominators[i] as number)) / ybar ** 2);
    const baseline = baselineFromHistory('ratio', sumsOf(values, [], denominators), false);
    expect(baseline?.mean).toBeCloseTo(xbar / ybar, 12);
    expect(baseline?.variance).toBeCloseTo(variance(linearised), 10);
  });

  it('CUPED: the variance of y - theta (x - x_bar), and the reduction', () => {
    const theta = covariance(covariate, values) / variance(covariate);
    const adjusted = values.map((y, i) => y - theta * ((covariate[i] as number) - mean(covariate)));
    const baseline = baselineFromHistory('revenue', sumsOf(values, covariate), true);
    expect(baseline?.variance).toBeCloseTo(variance(adjusted), 9);
    expect(baseline?.variance_reduction).toBeCloseTo(1 - variance(adjusted) / variance(values), 9);
  });

  it('no baseline from fewer than 2 units, no events, or no variance', () => {
    expect(baselineFromHistory('binary', sumsOf([1]), false)).toBeNull();
    expect(baselineFromHistory('binary', sumsOf([0, 0, 0]), false)).toBeNull();
    expect(baselineFromHistory('count', sumsOf([2, 2, 2]), false)).toBeNull();
  });
});

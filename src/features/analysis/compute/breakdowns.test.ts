import { describe, expect, it } from 'vitest';
import { holmRejections, twoSidedTail } from '../../../stats/holm.js';
import { buildBreakdowns, markSignificant } from './breakdowns.js';
import { metricRow } from '../../../../test/support/metric-row.js';
import { type BreakdownTotals, NONE_BUCKET, OTHER_BUCKET, type VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';

const purchases = metricRow({ id: 'm-count', key: 'purchases', name: 'Purchases', kind: 'count', aggregation: 'count' });

const variants = [
  { id: '1', key: 'control', weight: 50, is_control: true },
  { id: '2', key: 'treatment', weight: 50, is_control: false },
];

/** Per-variant totals of 0/1 values: units, and the units with a 1. */
function arms(control: [number, number], treatment: [number, number]): Map<string, VariantTotals> {
  const arm = (key: string, [units, ones]: [number, number]): [string, VariantTotals] => [
    key,
    { variant_key: key, units, metrics: [{ ...EMPTY_TOTALS, n: units, sum: ones, sum_of_squares: ones, conversions: ones }] },
  ];
  return new Map([arm('control', control), arm('treatment', treatment)]);
}

/** Seeded uniform generator (mulberry32): the simulation gives the same figures on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function binomial(random: () => number, n: number, p: number): number {
  let ones = 0;
  for (let i = 0; i < n; i += 1) if (random() < p) ones += 1;
  return ones;
}

describe('Holm', () => {
  it('rejects step-down: the k-th smallest p against alpha / (m - k), stopping at the first failure', async () => {
    // m = 4: thresholds 0.0125, 0.0167, 0.025, 0.05.
    expect(holmRejections([0.01, 0.04, 0.015, 0.03])).toEqual([true, false, true, false]);
    expect(holmRejections([0.012, 0.2, null])).toEqual([true, false, false]);
    expect(holmRejections([0.03, 0.03])).toEqual([false, false]);
    expect(holmRejections([0.02, 0.02])).toEqual([true, true]);
    expect(twoSidedTail(0.99)).toBeCloseTo(0.02, 12);
    expect(twoSidedTail(0.003)).toBeCloseTo(0.006, 12);
  });
});

describe('buildBreakdowns', () => {
  it('lists the top values in order, then (other) and (none), each with its units, SRM and effect', async () => {
    const breakdown: BreakdownTotals = {
      key: { name: 'country', kind: 'dimension' },
      values: ['de', 'fr'],
      buckets: new Map([
        [1, arms([100, 10], [100, 30])],
        [0, arms([500, 50], [400, 40])],
        [NONE_BUCKET, arms([20, 2], [20, 2])],
        [OTHER_BUCKET, arms([5, 1], [6, 1])],
      ]),
    };
    const [result] = await buildBreakdowns({ variants, analysed: variants, primary: purchases, breakdowns: [breakdown] });
    expect(result?.dimension).toBe('country');
    expect(result?.values.map((value) => [value.value, value.units])).toEqual([
      ['de', 900],
      ['fr', 200],
      ['(other)', 11],
      ['(none)', 40],
    ]);
    const de = result?.values[0];
    // 500 vs 400 against 50/50: chi2 = 2 * 50^2 / 450 = 11.11, p = 8.58e-4 (scipy.stats.chisquare).
    expect(de?.srm_chi_squared_p).toBeCloseTo(0.000858, 6);
    expect(de?.srm_warning).toBe(true);
    expect(result?.values[1]?.srm_warning).toBe(false);
    expect(result?.values[1]?.per_variant[1]?.effect?.chance_to_beat_control).toBeGreaterThan(0.999);
    expect(result?.values[1]?.significant_after_correction).toBe(true);
    expect(de?.significant_after_correction).toBe(false);
  });

  /**
   * 1,000 A/A experiments with 20 slices of 2 x 200 units each (a 10% rate, no effect): how often
   * does any slice look significant? Uncorrected (each slice at 5%) about 1 - 0.95^20 = 64%; after
   * Holm at most 5%. Simulation error of a 5% share over 1,000 runs: sqrt(0.05 * 0.95 / 1000) =
   * 0.7 points, so the bound checked is 5% + 2 standard errors.
   */
  it('keeps the chance of any false significant slice at 5% over 1,000 seeded A/A experiments', async () => {
    const random = mulberry32(18);
    const runs = 1000;
    let anyCorrected = 0;
    let anyUncorrected = 0;
    for (let run = 0; run < runs; run += 1) {
      const buckets = new Map<number, Map<string, VariantTotals>>();
      for (let slice = 0; slice < 20; slice += 1) buckets.set(slice, arms([200, binomial(random, 200, 0.1)], [200, binomial(random, 200, 0.1)]));
      const breakdown: BreakdownTotals = { key: { name: 'slice', kind: 'dimension' }, values: Array.from({ length: 20 }, (_, i) => `s${i}`), buckets };
      const [result] = await buildBreakdowns({ variants, analysed: variants, primary: purchases, breakdowns: [breakdown] });
      const values = result?.values ?? [];
      if (values.some((value) => value.significant_after_correction)) anyCorrected += 1;
      if (values.some((value) => twoSidedTail(value.per_variant[1]?.effect?.chance_to_beat_control ?? 0.5) <= 0.05)) anyUncorrected += 1;
    }
    if (process.env.VERDICT_SHOW_SIMULATION) console.log({ anyCorrected: anyCorrected / runs, anyUncorrected: anyUncorrected / runs });
    const standardError = Math.sqrt((0.05 * 0.95) / runs);
    expect(anyCorrected / runs).toBeLessThanOrEqual(0.05 + 2 * standardError);
    expect(anyUncorrected / runs).toBeGreaterThan(0.5);
  });

  it('marks a slice when any of its variants survives the correction', async () => {
    const slice = (chances: number[]) => ({
      value: 'x',
      units: 1,
      srm_chi_squared_p: null,
      srm_warning: false,
      per_variant: [{ is_control: true, effect: null }, ...chances.map((c) => ({ is_control: false, effect: { chance_to_beat_control: c } }))],
    });
    // Tails 0.5, 0.002 and 0.3, 0.8: 0.002 <= 0.05 / 4.
    expect(markSignificant([slice([0.75, 0.999]), slice([0.15, 0.4])] as never)).toEqual([true, false]);
  });
});

import { describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildInput } from './build.js';
import { metricRow } from '../../../../test/support/metric-row.js';
import type { VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS } from '../store/fold.js';

const DAY = 24 * 60 * 60 * 1000;

const converted = metricRow({ id: 'm-bin', key: 'converted', name: 'Converted', kind: 'binary', aggregation: 'count' });

function binaryTotals(rows: Array<[string, number, number]>): Map<string, VariantTotals> {
  return new Map(
    rows.map(([key, units, conversions]) => [
      key,
      { variant_key: key, units, metrics: [{ ...EMPTY_TOTALS, n: units, sum: conversions, sum_of_squares: conversions, conversions }] },
    ]),
  );
}

function input(overrides: Partial<BuildInput>): BuildInput {
  return {
    variants: [
      { id: '1', key: 'control', weight: 50, is_control: true },
      { id: '2', key: 'treatment', weight: 50, is_control: false },
    ],
    decisionRule: {},
    startedAt: 0,
    stoppedAt: null,
    computedAt: 3 * DAY,
    primary: converted,
    guardrails: [],
    totals: binaryTotals([
      ['control', 1000, 100],
      ['treatment', 1000, 100],
    ]),
    previous: null,
    ...overrides,
  };
}

describe('buildSnapshot', () => {
  it('leaves a zero-weight variant without units out of the comparison but reports its traffic', () => {
    const built = buildSnapshot(
      input({
        variants: [
          { id: '1', key: 'control', weight: 50, is_control: true },
          { id: '2', key: 'treatment', weight: 50, is_control: false },
          { id: '3', key: 'retired', weight: 0, is_control: false },
        ],
      }),
    );
    expect(built.per_variant.map((variant) => variant.variant_key)).toEqual(['control', 'treatment']);
    expect(built.traffic.map((variant) => [variant.variant_key, variant.exposed_units])).toEqual([
      ['control', 1000],
      ['treatment', 1000],
      ['retired', 0],
    ]);
    // Equal data: each arm is best half the time (exact two-arm form).
    expect(built.per_variant[0]?.prob_best).toBeCloseTo(0.5, 12);
    expect(built.srm_chi_squared_p).toBe(1);
  });

  it('keeps a zero-weight variant that still has units (its weight was set to 0 while running)', () => {
    const built = buildSnapshot(
      input({
        variants: [
          { id: '1', key: 'control', weight: 100, is_control: true },
          { id: '2', key: 'treatment', weight: 0, is_control: false },
        ],
      }),
    );
    expect(built.per_variant.map((variant) => variant.variant_key)).toEqual(['control', 'treatment']);
    // One weighted arm: SRM is undefined rather than a false alarm.
    expect(built.srm_chi_squared_p).toBeNull();
    expect(built.srm_warning).toBe(false);
  });

  it('says max_duration_reached once the time is up without a decision', () => {
    const built = buildSnapshot(input({ decisionRule: { max_duration_days: 2, min_sample_per_variant: 100 } }));
    expect(built.decision).toMatchObject({ verdict: 'max_duration_reached', variant_key: null, days_elapsed: 3 });
    expect(built.decision_rule_satisfied).toBe(false);
  });

  it('measures days to the stop, not to the computation, once stopped', () => {
    const built = buildSnapshot(input({ stoppedAt: DAY / 2, computedAt: 10 * DAY }));
    expect(built.decision.days_elapsed).toBe(0.5);
  });

  describe('always-valid rules', () => {
    const rule = { method: 'bayesian.always_valid_evalue' as const, posterior_threshold: 0.95, min_sample_per_variant: 1000 };
    const strong = binaryTotals([
      ['control', 2000, 200],
      ['treatment', 2000, 300],
    ]);
    const weak = binaryTotals([
      ['control', 2100, 210],
      ['treatment', 2100, 215],
    ]);

    it('records the running always-valid p-value per treatment', () => {
      const built = buildSnapshot(input({ decisionRule: rule, totals: strong }));
      expect(built.decision).toMatchObject({ verdict: 'winner', variant_key: 'treatment', method: 'bayesian.always_valid_evalue' });
      const pValues = built.decision.always_valid_p_values ?? {};
      expect(Object.keys(pValues)).toEqual(['treatment']);
      expect(pValues.treatment).toBeLessThan(0.05);
    });

    it('carries a past rejection forward under the same rule and metric, and only then', () => {
      const first = buildSnapshot(input({ decisionRule: rule, totals: strong }));
      const p = first.decision.always_valid_p_values?.treatment as number;
      const fresh = buildSnapshot(input({ decisionRule: rule, totals: weak }));
      expect(fresh.decision.verdict).not.toBe('winner');
      const carried = buildSnapshot(
        input({ decisionRule: rule, totals: weak, previous: { method: rule.method, primary_metric_id: converted.id, p_values: { treatment: p } } }),
      );
      expect(carried.decision).toMatchObject({ verdict: 'winner', variant_key: 'treatment' });
      expect(carried.decision.always_valid_p_values?.treatment).toBe(p);
      const otherMethod = buildSnapshot(
        input({
          decisionRule: rule,
          totals: weak,
          previous: { method: 'frequentist.sequential_msprt', primary_metric_id: converted.id, p_values: { treatment: p } },
        }),
      );
      expect(otherMethod.decision.verdict).not.toBe('winner');
      const otherMetric = buildSnapshot(
        input({ decisionRule: rule, totals: weak, previous: { method: rule.method, primary_metric_id: 'another', p_values: { treatment: p } } }),
      );
      expect(otherMetric.decision.verdict).not.toBe('winner');
    });

    it('records no p-values under the posterior-threshold rule', () => {
      expect(buildSnapshot(input({ totals: strong })).decision.always_valid_p_values).toBeNull();
    });
  });
});

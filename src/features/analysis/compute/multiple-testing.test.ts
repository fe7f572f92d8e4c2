import { describe, expect, it } from 'vitest';
import type { VariantPosterior } from '../schemas.js';
import { guardrailRegressions } from './build.js';
import { applyCorrection } from './multiple-testing.js';

/** A non-control variant whose effect has chance to beat control c (p = 2·min(c, 1 − c)). */
function treated(chance: number): VariantPosterior {
  return {
    variant_key: 'treatment',
    is_control: false,
    sample_size: 100,
    conversions: 10,
    observed_rate: 0.1,
    posterior: { mean: 0.1, credible_interval_95: [0.05, 0.15] },
    prob_best: chance,
    expected_loss_if_stop_now: 0,
    effect: {
      absolute: { mean: 0.02, credible_interval_95: [-0.01, 0.05] },
      relative: { mean: 0.2, credible_interval_95: [-0.1, 0.5] },
      chance_to_beat_control: chance,
    },
  };
}
const control: VariantPosterior = { ...treated(0.5), variant_key: 'control', is_control: true, effect: null };

describe('applyCorrection', () => {
  it('adjusts the goals together and leaves guardrails outside the family under scope goals', () => {
    // p = 0.01, 0.04, 0.8: BH gives 0.03, 0.06, 0.8 (scipy.stats.false_discovery_control([0.01, 0.04, 0.8])).
    const result = applyCorrection({
      goals: [
        [control, treated(0.995)],
        [control, treated(0.02)],
        [control, treated(0.6)],
      ],
      guardrails: [[control, treated(0.01)]],
      settings: { method: 'benjamini_hochberg', scope: 'goals' },
    });
    expect(result.report).toEqual({ method: 'benjamini_hochberg', scope: 'goals', family_size: 3 });
    const adjusted = result.goals.map((list) => list[1]?.effect?.adjusted_p_value as number);
    [0.03, 0.06, 0.8].forEach((expected, index) => expect(Math.abs((adjusted[index] as number) - expected)).toBeLessThan(1e-12));
    expect(result.goals[0]?.[0]?.effect).toBeNull();
    expect(result.guardrails[0]?.[1]?.effect).toMatchObject({ p_value: expect.closeTo(0.02, 12), adjusted_p_value: null, adjusted_interval_95: null });
  });

  it('counts a guardrail regression in the family only when it survives the correction', () => {
    // The guardrail's c = 0.04 (p = 0.08) is a regression alone; Holm over 3 makes it 0.24, no longer one.
    const settings = { method: 'holm', scope: 'goals_and_guardrails' } as const;
    const result = applyCorrection({
      goals: [
        [control, treated(0.5)],
        [control, treated(0.5)],
      ],
      guardrails: [[control, treated(0.04)]],
      settings,
    });
    expect(result.guardrails[0]?.[1]?.effect?.adjusted_p_value).toBeCloseTo(0.24, 12);
    const guardrail = (list: VariantPosterior[]) => ({
      metric_id: 'm',
      metric_key: 'k',
      metric_name: 'Load',
      unit: null,
      higher_is_better: false,
      cap_applied: null,
      per_variant: list,
    });
    expect(guardrailRegressions([guardrail(result.guardrails[0] as VariantPosterior[])], true)).toEqual([]);
    const alone = applyCorrection({ goals: [], guardrails: [[control, treated(0.04)]], settings });
    expect(guardrailRegressions([guardrail(alone.guardrails[0] as VariantPosterior[])], true)).toHaveLength(1);
  });
});

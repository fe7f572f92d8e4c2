import { describe, expect, it } from 'vitest';
import type { VariantAnalysis } from '../../../stats/index.js';
import { banditDecision, banditSrm } from './bandit-analysis.js';

const analysis = (variant_key: string, prob_best: number | null) => ({ variant_key, prob_best }) as VariantAnalysis;
const variants = [
  { id: 'a', key: 'a', weight: 20, is_control: true },
  { id: 'b', key: 'b', weight: 80, is_control: false },
];

describe('banditDecision: a variant’s prob_best reaching stop_at_prob_best', () => {
  it('names the winner at the threshold, keeps running below it, and stops at the maximum duration', () => {
    expect(banditDecision([analysis('a', 0.05), analysis('b', 0.95)], 0.95, 3, 30)).toMatchObject({ satisfied: true, verdict: 'winner', variant_key: 'b' });
    expect(banditDecision([analysis('a', 0.06), analysis('b', 0.94)], 0.95, 3, 30)).toMatchObject({ satisfied: false, verdict: 'keep_running' });
    expect(banditDecision([analysis('a', 0.06), analysis('b', 0.94)], 0.95, 30, 30)).toMatchObject({ verdict: 'max_duration_reached', variant_key: null });
    expect(banditDecision([analysis('a', null), analysis('b', null)], 0.95, 1, 30).reason).toMatch(/none computed yet/);
  });

  it('says why in words, without field names', () => {
    const reasons = [
      banditDecision([analysis('a', 0.05), analysis('b', 0.95)], 0.95, 3, 30).reason,
      banditDecision([analysis('a', 0.06), analysis('b', 0.94)], 0.95, 3, 30).reason,
      banditDecision([analysis('a', 0.06), analysis('b', 0.94)], 0.95, 30, 30).reason,
    ];
    expect(reasons[0]).toBe("the bandit's stopping rule: b has a 95% chance of being best, at least the 95% set to name a winner (not an always-valid test)");
    expect(reasons[1]).toBe("no variant's chance of being best has reached the 95% set to name a winner yet (best: b, 94%)");
    expect(reasons[2]).toBe('the planned maximum of 30 days is over; the best chance of being best: b, 94%');
    for (const reason of reasons) expect(reason).not.toMatch(/prob_best|stop_at|max_duration/);
  });
});

describe('banditSrm: observed units against Σ_p N_p·w_vp', () => {
  const periods = [
    { started_at: 0, weights: { a: 50, b: 50 }, seed: null },
    { started_at: 1, weights: { a: 20, b: 80 }, seed: 7 },
  ];
  it('holds for a split that followed each period’s weights and flags one that did not', () => {
    const followed = banditSrm(variants, {
      stopAtProbBest: 0.95,
      periods,
      units: new Map([
        ['a', [500, 400]],
        ['b', [500, 1600]],
      ]),
      cells: new Map(),
    });
    expect(followed).toMatchObject({ chiSquared: 0, warning: false });
    const broken = banditSrm(variants, {
      stopAtProbBest: 0.95,
      periods,
      units: new Map([
        ['a', [500, 700]],
        ['b', [500, 1300]],
      ]),
      cells: new Map(),
    });
    expect(broken.warning).toBe(true);
  });
});

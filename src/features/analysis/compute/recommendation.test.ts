import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { recommend, type RecommendationContext, type RecommendationInput } from './recommendation.js';
import { RECOMMENDATION_REASON_CODES } from '../schemas.js';

const running: RecommendationContext = { min_sample_per_variant: 1000, max_duration_days: 28, stopped: false };
const stopped: RecommendationContext = { ...running, stopped: true };

type Counts = RecommendationInput['per_variant'][number];

const arm = (variant_key: string, conversions: number, chance: number | null = null): Counts => ({
  variant_key,
  is_control: variant_key === 'control',
  conversions,
  effect: chance === null ? null : { relative: { mean: 0.12, credible_interval_95: [0.05, 0.19] }, chance_to_beat_control: chance },
});

/** A healthy two-variant experiment whose treatment won on the primary metric, with one guardrail. */
function healthyWinner(overrides: Partial<RecommendationInput> = {}): RecommendationInput {
  return {
    primary_metric: { key: 'signup', name: 'Sign-ups', kind: 'binary' },
    per_variant: [arm('control', 100), arm('treatment', 130, 0.999)],
    guardrails: [{ metric_key: 'load_ms', metric_name: 'Page load time', per_variant: [arm('control', 900), arm('treatment', 910, 0.4)] }],
    traffic: [
      { variant_key: 'control', weight: 50, exposed_units: 1000 },
      { variant_key: 'treatment', weight: 50, exposed_units: 1010 },
    ],
    srm_chi_squared_p: 0.82,
    srm_warning: false,
    decision: { verdict: 'winner', variant_key: 'treatment', method: 'bayesian.posterior_threshold', days_elapsed: 9.5, guardrail_regressions: [] },
    breakdowns: [],
    ...overrides,
  };
}

const codes = (input: RecommendationInput, context = running) => recommend(input, context).reasons.map((item) => item.code);

describe('recommend', () => {
  it('ships the winner when every check passes, naming the metric and the lift', () => {
    const result = recommend(healthyWinner(), running);
    expect(result).toMatchObject({ action: 'ship', variant_key: 'treatment', reasons: [{ code: 'rule_satisfied' }] });
    expect(result.reasons[0]?.message).toContain('on Sign-ups by');
    expect(result.reasons[0]?.message).toContain('+12.0% (95% interval +5.0% to +19.0%)');
    expect(result.reasons[0]?.message).toContain('stop the experiment');
  });

  it('never tells a stopped experiment to stop', () => {
    const messages = [
      recommend(healthyWinner(), stopped),
      recommend(healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'keep_running', variant_key: null } }), stopped),
      recommend(healthyWinner({ traffic: [{ variant_key: 'control', weight: 50, exposed_units: 10 }] }), stopped),
    ].flatMap((result) => result.reasons.map((item) => item.message));
    for (const message of messages) expect(message).not.toMatch(/stop the experiment|keep the experiment running/i);
    expect(recommend(healthyWinner(), stopped).action).toBe('ship');
  });

  it('investigates a sample-ratio mismatch instead of shipping, naming the broken slices by label', () => {
    const input = healthyWinner({
      srm_chi_squared_p: 1.5e-12,
      srm_warning: true,
      breakdowns: [
        {
          dimension: 'country',
          values: [
            { value: 'US', label: 'US', srm_warning: true },
            { value: 'FR', label: 'FR', srm_warning: false },
          ],
        },
        { dimension: 'source', values: [{ value: '01KEY', label: 'ios app', srm_warning: true }] },
      ],
    });
    const result = recommend(input, running);
    expect(result).toMatchObject({ action: 'investigate', variant_key: null });
    expect(codes(input)).toEqual(['srm']);
    expect(result.reasons[0]?.message).toContain('p < 0.0001');
    expect(result.reasons[0]?.message).toContain('country = US, source = ios app');
    expect(result.reasons[0]?.message).not.toContain('FR');
  });

  it('investigates when no unit was exposed', () => {
    const input = healthyWinner({
      per_variant: [arm('control', 0), arm('treatment', 0)],
      traffic: [
        { variant_key: 'control', weight: 50, exposed_units: 0 },
        { variant_key: 'treatment', weight: 50, exposed_units: 0 },
      ],
      decision: { ...healthyWinner().decision, verdict: 'keep_running', variant_key: null },
    });
    expect(recommend(input, running)).toMatchObject({ action: 'investigate', reasons: [{ code: 'no_exposures' }] });
  });

  it('investigates a metric without any counted event, guardrails included, by name', () => {
    const input = healthyWinner({
      guardrails: [{ metric_key: 'load_ms', metric_name: 'Page load time', per_variant: [arm('control', 0), arm('treatment', 0)] }],
    });
    const result = recommend(input, running);
    expect(result).toMatchObject({ action: 'investigate', reasons: [{ code: 'no_metric_events' }] });
    expect(result.reasons[0]?.message).toContain('Page load time');
  });

  it('lists every failed check together', () => {
    const input = healthyWinner({ srm_warning: true, per_variant: [arm('control', 0), arm('treatment', 0)] });
    expect(codes(input)).toEqual(['srm', 'no_metric_events']);
  });

  it('investigates an experiment without a primary metric', () => {
    const input = healthyWinner({ primary_metric: null, per_variant: [arm('control', 0), arm('treatment', 0)], guardrails: [] });
    expect(recommend(input, running)).toMatchObject({ action: 'investigate', reasons: [{ code: 'no_primary_metric' }] });
  });

  it('rolls back when the control won', () => {
    const input = healthyWinner({ decision: { ...healthyWinner().decision, variant_key: 'control' } });
    expect(recommend(input, running)).toMatchObject({ action: 'rollback', variant_key: 'control', reasons: [{ code: 'control_won' }] });
  });

  it('rolls back a winner that harms a guardrail, by the guardrail’s name', () => {
    const regression = { metric_id: 'm', metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'treatment', chance_to_beat_control: 0.002 };
    const input = healthyWinner({ decision: { ...healthyWinner().decision, guardrail_regressions: [regression] } });
    const result = recommend(input, running);
    expect(result).toMatchObject({ action: 'rollback', variant_key: 'treatment', reasons: [{ code: 'guardrail_regression' }] });
    expect(result.reasons[0]?.message).toContain('Page load time');
    expect(result.reasons[0]?.message).toContain('0.20%');
  });

  it.each([
    ['no rule satisfied yet', { verdict: 'keep_running', variant_key: null }],
    ['the control won', { verdict: 'winner', variant_key: 'control' }],
    ['another variant won', { verdict: 'winner', variant_key: 'b' }],
    ['no difference', { verdict: 'no_difference', variant_key: null }],
  ] as const)('rolls back a variant that harms a guardrail whatever the primary metric says (%s)', (_, verdict) => {
    const slow = {
      ...arm('a', 905, 0.0004),
      effect: { relative: { mean: 0.347, credible_interval_95: [0.322, 0.373] as [number, number] }, chance_to_beat_control: 0.0004 },
    };
    const regression = { metric_id: 'm', metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'a', chance_to_beat_control: 0.0004 };
    const input = healthyWinner({
      per_variant: [arm('control', 100), arm('a', 100, 0.5), arm('b', 130, 0.999)],
      guardrails: [{ metric_key: 'load_ms', metric_name: 'Page load time', per_variant: [arm('control', 900), slow, arm('b', 910, 0.4)] }],
      decision: { ...healthyWinner().decision, ...verdict, guardrail_regressions: [regression] },
    });
    const result = recommend(input, running);
    expect(result).toMatchObject({ action: 'rollback', variant_key: 'a', reasons: [{ code: 'guardrail_regression' }] });
    expect(result.reasons[0]?.message).toBe(
      'a makes the guardrail Page load time worse by +34.7% (95% interval +32.2% to +37.3%); its chance to beat the control there is 0.04%, below 5%. Roll a back unless its effect on Sign-ups is worth that cost.',
    );
  });

  it('rolls back the variant that harms most when several do, naming every regression', () => {
    const regressions = [
      { metric_id: 'm', metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'a', chance_to_beat_control: 0.03 },
      { metric_id: 'e', metric_key: 'errors', metric_name: 'Errors', variant_key: 'b', chance_to_beat_control: 0.001 },
    ];
    const input = healthyWinner({ decision: { ...healthyWinner().decision, guardrail_regressions: regressions } });
    const result = recommend(input, running);
    expect(result.variant_key).toBe('b');
    expect(result.reasons.map((item) => item.message.split(' worse')[0])).toEqual(['a makes the guardrail Page load time', 'b makes the guardrail Errors']);
  });

  it('keeps running a winner found before every weighted variant reached min_sample_per_variant', () => {
    const input = healthyWinner({
      traffic: [
        { variant_key: 'control', weight: 50, exposed_units: 999 },
        { variant_key: 'treatment', weight: 50, exposed_units: 1200 },
        { variant_key: 'retired', weight: 0, exposed_units: 3 },
      ],
    });
    const result = recommend(input, running);
    expect(result).toMatchObject({ action: 'keep_running', variant_key: null, reasons: [{ code: 'below_min_sample' }] });
    expect(result.reasons[0]?.message).toContain('control (999)');
    expect(result.reasons[0]?.message).not.toContain('retired');
  });

  it('reports no difference when the rule rules one out, once the sample is reached', () => {
    const input = healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'no_difference', variant_key: null } });
    expect(recommend(input, running)).toMatchObject({ action: 'no_difference', variant_key: null, reasons: [{ code: 'no_difference' }] });
  });

  it('reads the end of the planned duration as no difference, or as keep running while the sample is short', () => {
    const over = healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'max_duration_reached', variant_key: null, days_elapsed: 28.2 } });
    expect(recommend(over, running)).toMatchObject({ action: 'no_difference', reasons: [{ code: 'max_duration_reached' }] });
    const short = { ...over, traffic: [{ variant_key: 'control', weight: 50, exposed_units: 10 }] };
    expect(codes(short)).toEqual(['max_duration_reached', 'below_min_sample']);
    expect(recommend(short, running).action).toBe('keep_running');
  });

  it('keeps running while no rule is satisfied', () => {
    const input = healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'keep_running', variant_key: null } });
    expect(recommend(input, running)).toMatchObject({ action: 'keep_running', reasons: [{ code: 'rule_not_satisfied' }] });
    expect(recommend(input, stopped).reasons[0]?.message).toMatch(/inconclusive/);
  });

  it('never ships while any check fails, across every combination of failures', () => {
    const failures: Array<Partial<RecommendationInput>> = [
      { srm_warning: true },
      { per_variant: [arm('control', 0), arm('treatment', 0)] },
      { traffic: [{ variant_key: 'control', weight: 50, exposed_units: 5 }] },
      {
        decision: {
          ...healthyWinner().decision,
          guardrail_regressions: [{ metric_id: 'm', metric_key: 'load_ms', metric_name: 'x', variant_key: 'treatment', chance_to_beat_control: 0.01 }],
        },
      },
    ];
    for (let mask = 1; mask < 1 << failures.length; mask += 1) {
      const input = healthyWinner(Object.assign({}, ...failures.filter((_, index) => mask & (1 << index))));
      expect(recommend(input, running).action, `failures ${mask}`).not.toBe('ship');
    }
  });

  it('words every reason for a person: names, not keys, field names or rule ids', () => {
    const short = [{ variant_key: 'control', weight: 50, exposed_units: 10 }];
    const inputs: Array<[RecommendationInput, RecommendationContext]> = [
      [healthyWinner(), running],
      [healthyWinner({ srm_warning: true, srm_chi_squared_p: 2e-4 }), running],
      [healthyWinner({ per_variant: [arm('control', 0), arm('treatment', 0)] }), running],
      [healthyWinner({ traffic: short }), running],
      [healthyWinner({ traffic: short }), stopped],
      [healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'winner', variant_key: 'control' } }), running],
      [
        healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'no_difference', variant_key: null, method: 'frequentist.sequential_msprt' } }),
        running,
      ],
      [healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'max_duration_reached', variant_key: null }, traffic: short }), running],
      [healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'keep_running', variant_key: null } }), running],
      [healthyWinner({ decision: { ...healthyWinner().decision, verdict: 'keep_running', variant_key: null } }), stopped],
      [
        healthyWinner({
          decision: {
            ...healthyWinner().decision,
            guardrail_regressions: [
              { metric_id: 'm', metric_key: 'load_ms', metric_name: 'Page load time', variant_key: 'treatment', chance_to_beat_control: 0.01 },
            ],
          },
        }),
        running,
      ],
    ];
    const messages = inputs.flatMap(([input, context]) => recommend(input, context).reasons.map((item) => item.message));
    expect(messages.length).toBeGreaterThanOrEqual(inputs.length);
    for (const message of messages) {
      expect(message).not.toMatch(/\b[a-z]+_[a-z_]+\b/);
      expect(message).not.toMatch(/bayesian\.|frequentist\.|load_ms|\(signup\)|e-\d/);
    }
    expect(messages.join(' ')).toMatch(/the sequential test \(mSPRT\)/i);
    expect(messages.join(' ')).toContain('at least 1,000 units per variant');
  });

  it('has every reason code documented in docs/analysis.md', () => {
    const docs = readFileSync(new URL('../../../../docs/analysis.md', import.meta.url), 'utf8');
    for (const code of RECOMMENDATION_REASON_CODES) expect(docs, code).toContain(`| \`${code}\` |`);
  });
});

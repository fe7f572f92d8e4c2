import { beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../support/each-dialect.js';
import { HOUR, ManualClock, compute, createExperiment, createMetric, expectClose, exposeExactly, sendEvents, type OutgoingEvent } from './support.js';

/**
 * docs/statistics.md "Multiple testing" through HTTP: secondary metrics analysed beside the
 * primary, each effect's p-value and its adjustment over the family (Benjamini-Hochberg by
 * default, Holm with Bonferroni intervals, guardrails in the family when the scope says so), and
 * the recommendation reading the adjusted values. The expected adjusted p-values are recomputed
 * here from the raw ones by the textbook definitions (min over larger p of m·p/rank for BH, max
 * over smaller p of (m − rank + 1)·p for Holm), independently of src/stats.
 */
const T0 = Date.UTC(2034, 1, 6, 9);
const clock = new ManualClock(T0);
const UNITS = 60;
const Z_975 = 1.959963984540054;

type Variant = 'control' | 'treatment';

interface Scenario {
  /** Units of each variant (the first ones) that sign up: the primary metric. */
  signups: Record<Variant, number>;
  /** Whether the secondaries differ between the arms (clicks: every 4th vs every 3rd unit; spend +2). */
  secondaryEffect: boolean;
}

const clicked = (scenario: Scenario, variant: Variant, i: number) => (scenario.secondaryEffect && variant === 'treatment' ? i % 3 === 0 : i % 4 === 0);
const spend = (scenario: Scenario, variant: Variant, i: number) => 10 + (i % 7) + (scenario.secondaryEffect && variant === 'treatment' ? 2 : 0);

function eventsOf(scenario: Scenario, units: Record<string, string[]>): OutgoingEvent[] {
  const events: OutgoingEvent[] = [];
  for (const variant of ['control', 'treatment'] as const) {
    (units[variant] ?? []).forEach((unit_id, i) => {
      const at = T0 + HOUR;
      if (i < scenario.signups[variant]) events.push({ event_key: 'signup', unit_id, occurred_at: at });
      if (clicked(scenario, variant, i)) events.push({ event_key: 'click', unit_id, occurred_at: at });
      events.push({ event_key: 'purchase', unit_id, occurred_at: at, properties: { amount: spend(scenario, variant, i) } });
      events.push({
        event_key: 'page_load',
        unit_id,
        occurred_at: at,
        properties: { ms: 100 + 2 * (i % 5) + (variant === 'treatment' && i % 2 === 0 ? 1 : 0) },
      });
    });
  }
  return events;
}

/** BH adjusted p-values by the definition: for each p, the minimum over p' ≥ p of m·p'/rank(p'), capped at 1. */
function expectedBh(ps: number[]): number[] {
  const sorted = [...ps].sort((a, b) => a - b);
  const m = ps.length;
  return ps.map((p) => Math.min(1, ...sorted.flatMap((q, rank) => (q >= p ? [(m * q) / (rank + 1)] : []))));
}

/** Holm adjusted p-values by the definition: for each p, the maximum over p' ≤ p of (m − rank + 1)·p', capped at 1. */
function expectedHolm(ps: number[]): number[] {
  const sorted = [...ps].sort((a, b) => a - b);
  const m = ps.length;
  return ps.map((p) => Math.min(1, Math.max(...sorted.flatMap((q, rank) => (q <= p ? [(m - rank) * q] : [])))));
}

const treatmentEffect = (perVariant: any[]) => perVariant.find((variant) => variant.variant_key === 'treatment').effect;

describeEachStore(
  'secondary metrics and multiple testing through HTTP',
  (server) => {
    let key: string;
    let environmentId: string;
    const metrics: Record<string, string> = {};

    beforeAll(async () => {
      clock.set(T0);
      ({ key, environmentId } = await server().bootstrap('Multiple testing'));
      metrics.signup = await createMetric(server(), key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary' });
      metrics.click = await createMetric(server(), key, { key: 'clicked', name: 'Clicks', event_key: 'click', kind: 'binary' });
      metrics.spend = await createMetric(server(), key, {
        key: 'spend',
        name: 'Spend',
        event_key: 'purchase',
        kind: 'revenue',
        aggregation: 'sum',
        property_path: 'amount',
      });
      metrics.load = await createMetric(server(), key, {
        key: 'load_ms',
        name: 'Page load time',
        event_key: 'page_load',
        kind: 'duration',
        aggregation: 'mean',
        property_path: 'ms',
        higher_is_better: false,
      });
    });

    async function setUp(name: string, scenario: Scenario, extra: Record<string, unknown> = {}) {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: name,
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: metrics.signup,
        secondary_metric_ids: [metrics.click, metrics.spend],
        guardrail_metric_ids: [metrics.load],
        decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 30 },
        ...extra,
      });
      const units = await exposeExactly(server(), key, experiment, { control: UNITS, treatment: UNITS }, name);
      clock.set(T0 + 2 * HOUR);
      await sendEvents(server(), key, eventsOf(scenario, units));
      clock.set(T0 + 6 * HOUR);
      return experiment;
    }

    it('stores secondary_metric_ids and the default correction, and rejects overlaps and unknown ids naming the field', async () => {
      const base = {
        environment_id: environmentId,
        variants: [
          { key: 'control', weight: 50 },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: metrics.signup,
      };
      const created = await createExperiment(server(), key, { ...base, key: 'mt-draft', secondary_metric_ids: [metrics.click] }, false);
      expect(created).toMatchObject({ secondary_metric_ids: [metrics.click], multiple_testing: { method: 'benjamini_hochberg', scope: 'goals' } });
      const patched = await server().request('PATCH', `/v1/experiments/${created.id}`, { key, body: { multiple_testing: { method: 'holm' } } });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.multiple_testing).toEqual({ method: 'holm', scope: 'goals' });

      const cases: Array<[Record<string, unknown>, string]> = [
        [{ secondary_metric_ids: [metrics.signup] }, '/secondary_metric_ids/0'],
        [{ secondary_metric_ids: [metrics.click, metrics.load], guardrail_metric_ids: [metrics.load] }, '/secondary_metric_ids/1'],
        [{ secondary_metric_ids: ['01HZZZZZZZZZZZZZZZZZZZZZZZ'] }, '/secondary_metric_ids/0'],
        [{ multiple_testing: { method: 'bonferroni' } }, '/multiple_testing/method'],
      ];
      for (const [fields, pointer] of cases) {
        const rejected = await server().request('POST', '/v1/experiments', {
          key,
          body: { name: 'Bad', hypothesis: 'h', unit_type: 'user', ...base, key: 'mt-bad', ...fields },
        });
        expect(rejected.status, rejected.text).toBeGreaterThanOrEqual(400);
        expect(rejected.status).toBeLessThan(500);
        expect(rejected.headers.get('content-type')).toContain('application/problem+json');
        expect(rejected.body.errors.map((error: any) => error.pointer)).toContain(pointer);
      }
      const list = await server().request('GET', '/v1/experiments?limit=100', { key });
      expect(list.body.data.map((experiment: any) => experiment.key)).not.toContain('mt-bad');
      // A metric in use as a secondary cannot be deleted from under the experiment.
      const deleted = await server().request('DELETE', `/v1/metrics/${metrics.click}`, { key });
      expect(deleted.status).toBe(409);
    });

    it('analyses the secondaries like the primary and adjusts every goal by Benjamini-Hochberg, in both modes', async () => {
      const scenario = { signups: { control: 6, treatment: 20 }, secondaryEffect: true };
      const experiment = await setUp('mt-bh', scenario);
      const snapshot = await compute(server(), key, experiment.id, 'incremental');
      expect(snapshot.secondary_metrics.map((metric: any) => [metric.key, metric.name, metric.kind])).toEqual([
        ['clicked', 'Clicks', 'binary'],
        ['spend', 'Spend', 'revenue'],
      ]);
      // The click metric's posterior is Beta(1 + conversions, 1 + units − conversions), read from the hidden plan.
      const clicks = snapshot.secondary_metrics[0].per_variant;
      for (const variant of ['control', 'treatment'] as const) {
        const converted = Array.from({ length: UNITS }, (_, i) => clicked(scenario, variant, i)).filter(Boolean).length;
        const entry = clicks.find((item: any) => item.variant_key === variant);
        expect(entry).toMatchObject({ sample_size: UNITS, conversions: converted });
        expectClose(entry.posterior.mean, (1 + converted) / (2 + UNITS), 1e-12, `${variant} click posterior mean`);
      }
      expect(snapshot.multiple_testing).toEqual({ method: 'benjamini_hochberg', scope: 'goals', family_size: 3 });
      const goals = [snapshot.per_variant, ...snapshot.secondary_metrics.map((metric: any) => metric.per_variant)].map(treatmentEffect);
      for (const effect of goals) {
        const c = effect.chance_to_beat_control;
        expectClose(effect.p_value, Math.min(1, 2 * Math.min(c, 1 - c)), 1e-12, 'p_value');
        expect(effect.adjusted_interval_95).toBeNull();
      }
      const expected = expectedBh(goals.map((effect) => effect.p_value));
      goals.forEach((effect, index) => expectClose(effect.adjusted_p_value, expected[index] as number, 1e-12, `adjusted ${index}`));
      expect(goals[0].adjusted_p_value).toBeGreaterThan(goals[0].p_value);
      // The guardrail is outside the goals' family: a raw p-value, no adjusted one.
      const guardrail = treatmentEffect(snapshot.guardrails[0].per_variant);
      expect(guardrail.p_value).toEqual(expect.any(Number));
      expect(guardrail.adjusted_p_value).toBeNull();
      // The control carries no effect, so no p-value.
      expect(snapshot.per_variant.find((variant: any) => variant.is_control).effect).toBeNull();
      // The recommendation reads the adjusted value and says so.
      expect(snapshot.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment', reasons: [{ code: 'rule_satisfied' }] });
      expect(snapshot.decision.recommendation.reasons[0].message).toMatch(
        /adjusted for the 3 comparisons of the goals read together \(Benjamini-Hochberg\) is 0\.\d/,
      );

      const full = await compute(server(), key, experiment.id, 'full');
      expect(full.secondary_metrics).toEqual(snapshot.secondary_metrics.map((metric: any) => expect.objectContaining({ id: metric.id })));
      full.secondary_metrics.forEach((metric: any, index: number) => {
        const incremental = snapshot.secondary_metrics[index];
        expectClose(
          treatmentEffect(metric.per_variant).adjusted_p_value,
          treatmentEffect(incremental.per_variant).adjusted_p_value,
          1e-9,
          `full vs incremental ${metric.key}`,
        );
        expect(metric.per_variant.map((variant: any) => variant.conversions)).toEqual(incremental.per_variant.map((variant: any) => variant.conversions));
      });
    });

    it('keeps running when the correction moves a winner’s p-value above the rule’s bar, and ships the same data uncorrected', async () => {
      // 12 vs 22 sign-ups of 60: chance to beat control about 0.978 (a winner at 0.95), p about
      // 0.045; two goals without an effect take BH's adjusted value to about 0.13, above 0.10.
      const scenario = { signups: { control: 12, treatment: 22 }, secondaryEffect: false };
      const corrected = await compute(server(), key, (await setUp('mt-blocked', scenario)).id);
      expect(corrected.decision.verdict).toBe('winner');
      const effect = treatmentEffect(corrected.per_variant);
      expect(effect.p_value).toBeLessThan(0.1);
      expect(effect.adjusted_p_value).toBeGreaterThan(0.1);
      expect(corrected.decision.recommendation).toMatchObject({
        action: 'keep_running',
        variant_key: null,
        reasons: [{ code: 'not_significant_after_correction' }],
      });
      expect(corrected.decision.recommendation.reasons[0].message).toContain('(Benjamini-Hochberg)');

      const uncorrected = await compute(server(), key, (await setUp('mt-none', scenario, { multiple_testing: { method: 'none' } })).id);
      expect(uncorrected.multiple_testing).toMatchObject({ method: 'none' });
      expectClose(treatmentEffect(uncorrected.per_variant).adjusted_p_value, treatmentEffect(uncorrected.per_variant).p_value, 0, 'none leaves p');
      expect(uncorrected.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment', reasons: [{ code: 'rule_satisfied' }] });
    });

    it('Holm over goals and guardrails: adjusted p-values with Bonferroni intervals on every metric in the family', async () => {
      const scenario = { signups: { control: 6, treatment: 20 }, secondaryEffect: true };
      const experiment = await setUp('mt-holm', scenario, { multiple_testing: { method: 'holm', scope: 'goals_and_guardrails' } });
      const snapshot = await compute(server(), key, experiment.id, 'full');
      expect(snapshot.multiple_testing).toEqual({ method: 'holm', scope: 'goals_and_guardrails', family_size: 4 });
      const lists = [snapshot.per_variant, ...snapshot.secondary_metrics.map((metric: any) => metric.per_variant), snapshot.guardrails[0].per_variant];
      const effects = lists.map(treatmentEffect);
      const expected = expectedHolm(effects.map((effect) => effect.p_value));
      const scale = 2.497705474412374 / Z_975; // scipy.stats.norm.ppf(1 - 0.05 / 8) / norm.ppf(0.975)
      effects.forEach((effect, index) => {
        expectClose(effect.adjusted_p_value, expected[index] as number, 1e-12, `holm ${index}`);
        const [low, high] = effect.absolute.credible_interval_95;
        const mean = effect.absolute.mean;
        expectClose(effect.adjusted_interval_95.absolute[0], mean - (mean - low) * scale, 1e-9, `bonferroni low ${index}`);
        expectClose(effect.adjusted_interval_95.absolute[1], mean + (high - mean) * scale, 1e-9, `bonferroni high ${index}`);
        expect(effect.adjusted_interval_95.relative[1] - effect.adjusted_interval_95.relative[0]).toBeGreaterThan(
          effect.relative.credible_interval_95[1] - effect.relative.credible_interval_95[0],
        );
      });
    });
  },
  { clock },
);

import { beforeAll, beforeEach, expect, it } from 'vitest';
import { computeById } from '../../src/features/analysis/service.js';
import { describeEachStore } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import {
  compute,
  covariance,
  createExperiment,
  createMetric,
  expectClose,
  exposeExactly,
  HOUR,
  ManualClock,
  mean,
  quantileOfNonzero,
  sendEvents,
  sum,
  type OutgoingEvent,
} from './support.js';

/**
 * docs/statistics.md "2a. Effect against the control" through HTTP: effects against control, a lower-is-better guardrail and
 * its regression warning, absolute and percentile caps, and a ratio metric. The expected numbers
 * are computed here from the per-unit values the scenario sends (two-pass moments on plain
 * arrays, sorting for the percentile), independently of the database's sums; the binary effects
 * come from `python3 scripts/reference/beta_effects.py` (SciPy).
 */
const T0 = Date.UTC(2032, 2, 1, 12);
const clock = new ManualClock(T0);
const Z = 1.959963984540054;
const UNITS = 60;

type Variant = 'control' | 'treatment';

/** What unit i of a variant does: its purchase amounts, whether it hits an error, its sessions. */
function plan(variant: Variant, i: number): { amounts: number[]; error: boolean } {
  const converts = variant === 'control' ? i % 5 === 0 : i % 2 === 0;
  const amounts = converts ? Array.from({ length: 1 + (i % 3) }, (_, j) => 5 + ((i * 7 + j * 13) % 40)) : [];
  // Two outliers that the percentile cap must tame.
  if (variant === 'treatment' && i === 0) amounts[0] = 5000;
  if (variant === 'control' && i === 5) amounts[0] = 3000;
  const error = variant === 'control' ? i % 10 === 0 : i % 2 === 1;
  return { amounts, error };
}

const revenueOf = (variant: Variant) => Array.from({ length: UNITS }, (_, i) => sum(plan(variant, i).amounts));
const ordersOf = (variant: Variant) => Array.from({ length: UNITS }, (_, i) => plan(variant, i).amounts.length);

/** Normal posterior of a mean and its effect, written out from the arrays. */
function expectedNormal(control: readonly number[], treatment: readonly number[]) {
  const [mc, mt] = [mean(control), mean(treatment)];
  const [vc, vt] = [covariance(control, control) / control.length, covariance(treatment, treatment) / treatment.length];
  const relative = (mt - mc) / mc;
  const relativeSd = Math.sqrt(vt / mc ** 2 + (vc * mt ** 2) / mc ** 4);
  return {
    control: { mean: mc, ci: [mc - Z * Math.sqrt(vc), mc + Z * Math.sqrt(vc)] },
    treatment: { mean: mt, ci: [mt - Z * Math.sqrt(vt), mt + Z * Math.sqrt(vt)] },
    absolute: [mt - mc - Z * Math.sqrt(vc + vt), mt - mc + Z * Math.sqrt(vc + vt)],
    relative: [relative - Z * relativeSd, relative + Z * relativeSd],
  };
}

/** Delta-method posterior of sum(x) / sum(y) from the per-unit arrays (Deng et al. 2018). */
function expectedRatio(x: readonly number[], y: readonly number[]) {
  const [mx, my, n] = [mean(x), mean(y), x.length];
  const variance = (covariance(x, x) / my ** 2 - (2 * mx * covariance(x, y)) / my ** 3 + (mx ** 2 * covariance(y, y)) / my ** 4) / n;
  return { mean: sum(x) / sum(y), ci: [mx / my - Z * Math.sqrt(variance), mx / my + Z * Math.sqrt(variance)], variance };
}

function expectPosterior(actual: any, expected: { mean: number; ci: number[] }, what: string): void {
  expectClose(actual.posterior.mean, expected.mean, 1e-9, `${what} mean`);
  expectClose(actual.posterior.credible_interval_95[0], expected.ci[0] as number, 1e-9, `${what} ci[0]`);
  expectClose(actual.posterior.credible_interval_95[1], expected.ci[1] as number, 1e-9, `${what} ci[1]`);
}

function expectNormalMetric(perVariant: any[], control: number[], treatment: number[], what: string): void {
  const expected = expectedNormal(control, treatment);
  expectPosterior(perVariant[0], expected.control, `${what}/control`);
  expectPosterior(perVariant[1], expected.treatment, `${what}/treatment`);
  expect(perVariant[0].effect).toBeNull();
  const effect = perVariant[1].effect;
  expectClose(effect.absolute.credible_interval_95[0], expected.absolute[0] as number, 1e-9, `${what} absolute[0]`);
  expectClose(effect.absolute.credible_interval_95[1], expected.absolute[1] as number, 1e-9, `${what} absolute[1]`);
  expectClose(effect.relative.credible_interval_95[0], expected.relative[0] as number, 1e-9, `${what} relative[0]`);
  expectClose(effect.relative.credible_interval_95[1], expected.relative[1] as number, 1e-9, `${what} relative[1]`);
}

/** Every number of `actual` within 1e-9 (relative) of `expected`'s, everything else equal. */
function expectSameNumbers(actual: unknown, expected: unknown, what: string): void {
  if (typeof expected === 'number') {
    expect(typeof actual, what).toBe('number');
    expect(Math.abs((actual as number) - expected), `${what}: ${String(actual)} vs ${expected}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(expected)));
  } else if (expected !== null && typeof expected === 'object') {
    expect(Object.keys(actual as object).sort(), what).toEqual(Object.keys(expected).sort());
    for (const [field, value] of Object.entries(expected)) expectSameNumbers((actual as Record<string, unknown>)[field], value, `${what}.${field}`);
  } else {
    expect(actual, what).toEqual(expected);
  }
}

/** What the tests read: a workspace with the metrics, an experiment exposing 60 units per variant and their events. */
interface EffectsScenario {
  key: string;
  experiment: any;
  ids: Record<string, string>;
}

/**
 * Sets up the metrics, exposes 60 units per variant and sends their events, in a workspace of its
 * own; leaves the clock at T0 + 6 h.
 */
async function setUpEffects(server: TestServer, workspace: string): Promise<EffectsScenario> {
  clock.set(T0);
  const boot = await server.bootstrap(workspace);
  const key = boot.key;
  const ids: Record<string, string> = {};
  const revenue = { event_key: 'buy', kind: 'revenue', aggregation: 'sum', property_path: 'amount' };
  ids.converted = await createMetric(server, key, { key: 'converted', event_key: 'buy', kind: 'binary' });
  ids.errors = await createMetric(server, key, { key: 'errors', event_key: 'app.error', kind: 'binary', higher_is_better: false });
  ids.revenue = await createMetric(server, key, { key: 'revenue', ...revenue });
  ids.revenue_p90 = await createMetric(server, key, { key: 'revenue_p90', ...revenue, capping: { type: 'percentile', value: 0.9 } });
  ids.revenue_cap100 = await createMetric(server, key, { key: 'revenue_cap100', ...revenue, capping: { type: 'absolute', value: 100 } });
  ids.orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
  ids.aov = await createMetric(server, key, { key: 'aov', kind: 'ratio', numerator_metric_id: ids.revenue, denominator_metric_id: ids.orders });
  const experiment = await createExperiment(server, key, {
    environment_id: boot.environmentId,
    key: 'effects',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    primary_metric_id: ids.converted,
    guardrail_metric_ids: [ids.errors, ids.revenue, ids.revenue_p90, ids.revenue_cap100, ids.aov],
    decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 50 },
  });
  const units = await exposeExactly(server, key, experiment, { control: UNITS, treatment: UNITS });
  const events: OutgoingEvent[] = [];
  for (const variant of ['control', 'treatment'] as const) {
    (units[variant] ?? []).forEach((unit_id, i) => {
      const { amounts, error } = plan(variant, i);
      amounts.forEach((amount, j) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 + (j + 1) * HOUR, properties: { amount } }));
      if (error) events.push({ event_key: 'app.error', unit_id, occurred_at: T0 + HOUR });
    });
  }
  clock.set(T0 + 6 * HOUR);
  await sendEvents(server, key, events);
  return { key, experiment, ids };
}

describeEachStore(
  'effects, direction, guardrail regressions, capping and ratio metrics through HTTP',
  (server) => {
    // A read-only fixture, set up once: no test edits its metrics or its experiment (the test that
    // edits definitions sets up a workspace of its own).
    let key: string;
    let experiment: any;
    let ids: Record<string, string>;
    let crashes: string;
    beforeAll(async () => {
      ({ key, experiment, ids } = await setUpEffects(server(), 'Effects'));
      crashes = await createMetric(server(), key, { key: 'crashes', event_key: 'app.crash', kind: 'binary', higher_is_better: false });
    });
    beforeEach(() => clock.set(T0 + 6 * HOUR));
    const guardrail = (snapshot: any, metricKey: string) => snapshot.guardrails.find((item: any) => item.metric_key === metricKey);

    it('reports the binary effect against control, matching SciPy', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.primary_metric).toMatchObject({ key: 'converted', higher_is_better: true, cap_applied: null });
      const [control, treatment] = snapshot.per_variant;
      expect([control.conversions, treatment.conversions]).toEqual([12, 30]);
      expect(control.effect).toBeNull();
      // scripts/reference/beta_effects.py, case e2e_converted (12/60 vs 30/60).
      expectClose(treatment.effect.absolute.credible_interval_95[0], 0.1278750453, 1e-9, 'absolute[0]');
      expectClose(treatment.effect.absolute.credible_interval_95[1], 0.4459016043, 1e-9, 'absolute[1]');
      expectClose(treatment.effect.relative.credible_interval_95[0], 0.44266313, 1e-9, 'relative[0]');
      expectClose(treatment.effect.relative.credible_interval_95[1], 3.3869936236, 1e-9, 'relative[1]');
      expectClose(treatment.effect.chance_to_beat_control, 0.9997170082, 1e-9, 'chance_to_beat_control');
      // E[p_t] - E[p_c] and E[p_t] E[1/p_c] - 1 for Beta(31, 31) and Beta(13, 49): E[1/p_c] = 61 / 12.
      expectClose(treatment.effect.absolute.mean, 31 / 62 - 13 / 62, 1e-12, 'absolute mean');
      expectClose(treatment.effect.relative.mean, (31 / 62) * (61 / 12) - 1, 1e-12, 'relative mean');
      expect(snapshot.decision).toMatchObject({ verdict: 'winner', variant_key: 'treatment' });
    });

    it('reads a lower-is-better guardrail downwards and warns of its regression', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      const errors = guardrail(snapshot, 'errors');
      expect(errors.higher_is_better).toBe(false);
      // 30/60 treatment units hit an error against 6/60: P(treatment lower) = 1 - 0.9999994375 (SciPy, e2e_errors).
      expectClose(errors.per_variant[1].effect.chance_to_beat_control, 1 - 0.9999994375, 1e-9, 'errors chance_to_beat_control');
      expect(errors.per_variant[0].prob_best).toBeGreaterThan(0.999);
      expect(errors.per_variant[1].expected_loss_if_stop_now).toBeGreaterThan(errors.per_variant[0].expected_loss_if_stop_now);
      expect(snapshot.decision.guardrail_regressions).toEqual([
        {
          metric_id: ids.errors,
          metric_key: 'errors',
          metric_name: 'errors',
          variant_key: 'treatment',
          chance_to_beat_control: errors.per_variant[1].effect.chance_to_beat_control,
        },
      ]);
    });

    it('caps each unit’s value before the sums: absolute and percentile, with cap_applied', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      const [control, treatment] = [revenueOf('control'), revenueOf('treatment')];
      expectNormalMetric(guardrail(snapshot, 'revenue').per_variant, control, treatment, 'revenue');
      expect(guardrail(snapshot, 'revenue').cap_applied).toBeNull();

      const cap = quantileOfNonzero([...control, ...treatment], 0.9);
      expect(cap).toBeLessThan(3000);
      const p90 = guardrail(snapshot, 'revenue_p90');
      expectClose(p90.cap_applied, cap, 1e-9, 'cap_applied');
      const capped = (values: number[], at: number) => values.map((value) => Math.min(value, at));
      expectNormalMetric(p90.per_variant, capped(control, cap), capped(treatment, cap), 'revenue_p90');

      const absolute = guardrail(snapshot, 'revenue_cap100');
      expect(absolute.cap_applied).toBe(100);
      expectNormalMetric(absolute.per_variant, capped(control, 100), capped(treatment, 100), 'revenue_cap100');
    });

    it('gives the same capped and ratio numbers when the units are cut into chunks of any size', async () => {
      const whole = await compute(server(), key, experiment.id);
      for (const chunkUnits of [7, 25, 60]) {
        const chunked = (await computeById(server().ctx, experiment.id, { trigger: 'cli', chunkUnits })) as any;
        for (const metricKey of ['revenue_p90', 'revenue_cap100', 'aov', 'errors']) {
          expect(guardrail(chunked, metricKey).cap_applied, `${metricKey} in chunks of ${chunkUnits}`).toEqual(guardrail(whole, metricKey).cap_applied);
          expectSameNumbers(guardrail(chunked, metricKey).per_variant, guardrail(whole, metricKey).per_variant, `${metricKey} in chunks of ${chunkUnits}`);
        }
      }
    });

    it('computes a ratio metric as sum over sum with the delta-method variance', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      const aov = guardrail(snapshot, 'aov');
      const control = expectedRatio(revenueOf('control'), ordersOf('control'));
      const treatment = expectedRatio(revenueOf('treatment'), ordersOf('treatment'));
      expectPosterior(aov.per_variant[0], control, 'aov/control');
      expectPosterior(aov.per_variant[1], treatment, 'aov/treatment');
      expect(aov.per_variant.map((variant: any) => [variant.sample_size, variant.conversions])).toEqual([
        [60, 12],
        [60, 30],
      ]);
      const half = Z * Math.sqrt(control.variance + treatment.variance);
      expectClose(aov.per_variant[1].effect.absolute.credible_interval_95[0], treatment.mean - control.mean - half, 1e-9, 'aov absolute[0]');
      expectClose(aov.per_variant[1].effect.relative.mean, treatment.mean / control.mean - 1, 1e-9, 'aov relative mean');
    });

    it.each(['bayesian.posterior_threshold', 'bayesian.always_valid_evalue', 'frequentist.sequential_msprt'])(
      'declares the variant with fewer crashes the winner of a lower-is-better primary metric under %s',
      async (method) => {
        const lower = await createExperiment(server(), key, {
          environment_id: experiment.environment_id,
          key: `fewer-crashes-${method.replaceAll('.', '-')}`,
          variants: [
            { key: 'control', weight: 50, is_control: true },
            { key: 'stable', weight: 50 },
          ],
          primary_metric_id: crashes,
          decision_rule: { method, posterior_threshold: 0.95, min_sample_per_variant: 50, minimum_detectable_effect: 3 },
        });
        const units = await exposeExactly(server(), key, lower, { control: UNITS, stable: UNITS }, method);
        // Half the control's units crash, a tenth of the stable variant's.
        const crashed = [...(units.control ?? []).filter((_, i) => i % 2 === 1), ...(units.stable ?? []).filter((_, i) => i % 10 === 0)];
        clock.set(T0 + 7 * HOUR);
        await sendEvents(
          server(),
          key,
          crashed.map((unit_id) => ({ event_key: 'app.crash', unit_id, occurred_at: T0 + 7 * HOUR })),
        );
        clock.set(T0 + 6 * HOUR);
        const snapshot = await compute(server(), key, lower.id);
        expect(snapshot.primary_metric.higher_is_better).toBe(false);
        expect(snapshot.decision).toMatchObject({ verdict: 'winner', variant_key: 'stable', method });
        expect(snapshot.per_variant[1].effect.chance_to_beat_control).toBeGreaterThan(0.999);
      },
    );

    it('uses the edited definition in later snapshots', async () => {
      const own = await setUpEffects(server(), 'Effects, edited');
      // A snapshot under the old definitions first, so the one below is a later snapshot.
      await compute(server(), own.key, own.experiment.id);
      const patched = await server().request('PATCH', `/v1/metrics/${own.ids.errors}`, { key: own.key, body: { higher_is_better: true } });
      expect(patched.status).toBe(200);
      const cap = await server().request('PATCH', `/v1/metrics/${own.ids.revenue_p90}`, { key: own.key, body: { capping: { type: 'absolute', value: 100 } } });
      expect(cap.status).toBe(200);
      const snapshot = await compute(server(), own.key, own.experiment.id);
      expect(guardrail(snapshot, 'errors').higher_is_better).toBe(true);
      expectClose(guardrail(snapshot, 'errors').per_variant[1].effect.chance_to_beat_control, 0.9999994375, 1e-9, 'errors, now higher is better');
      expect(snapshot.decision.guardrail_regressions).toEqual([]);
      expect(guardrail(snapshot, 'revenue_p90').cap_applied).toBe(100);
      expect(guardrail(snapshot, 'revenue_p90').per_variant).toEqual(guardrail(snapshot, 'revenue_cap100').per_variant);
    });
  },
  { clock },
);

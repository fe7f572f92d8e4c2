import { beforeAll, beforeEach, expect, it } from 'vitest';
import { computeById } from '../../src/features/analysis/service.js';
import { describeEachStore } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import {
  compute,
  covariance,
  createExperiment,
  createMetric,
  DAY,
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
 * CUPED (docs/statistics.md "2b. CUPED variance reduction") through HTTP. The expected numbers are computed here from the
 * per-unit values the scenario sends: each unit's pre-period covariate and metric value as plain
 * arrays, theta as the two-pass sample covariance over the sample variance, and each variant's
 * adjusted mean and variance as the two-pass mean and variance of the per-unit adjusted values
 * y - theta (x - mean(x)): independent of the database's sums and of src/stats/cuped.ts.
 * (src/stats/cuped.test.ts checks the same formulas against NumPy's least squares.)
 */
const T0 = Date.UTC(2032, 4, 1, 12);
const clock = new ManualClock(T0);
const Z = 1.959963984540054;
const UNITS = 60;
const LOOKBACK_DAYS = 7;
const CAP = 100;

type Variant = 'control' | 'treatment';
type Period = { pre: number[]; post: number[] };

/** Unit i's purchase amounts before (within the lookback) and after its exposure. */
function plan(variant: Variant, i: number): Period & { outside: boolean } {
  const propensity = (i * 7) % 11;
  const pre = i % 4 === 0 ? [] : [10 + 3 * propensity, ...(i % 3 === 0 ? [5 + propensity] : [])];
  if (variant === 'control' && i === 7) pre[0] = 500; // capped at 100 in the covariate too
  const lift = variant === 'treatment' ? 4 : 0;
  const post = propensity > 3 || i % 5 === 0 ? [8 + 3 * propensity + (i % 5) + lift, ...(i % 2 === 0 ? [3 + (i % 7)] : [])] : [];
  // A purchase 9 days before the exposure: outside the 7-day lookback, never counted.
  return { pre, post, outside: i % 6 === 1 };
}

/** The p90 cap: over the experiment-period revenue of every unit; the covariate is held to the same cap. */
const P90 = quantileOfNonzero(
  (['control', 'treatment'] as const).flatMap((variant) => Array.from({ length: UNITS }, (_, i) => sum(plan(variant, i).post))),
  0.9,
);

type UnitValue = (period: number[]) => number | null;
const METRIC_VALUES: Record<string, UnitValue> = {
  revenue_p90: (amounts) => Math.min(sum(amounts), P90),
  revenue: (amounts) => Math.min(sum(amounts), CAP),
  converted: (amounts) => (amounts.length > 0 ? 1 : 0),
  orders: (amounts) => amounts.length,
  avg_amount: (amounts) => (amounts.length > 0 ? mean(amounts) : null),
};

/** Per variant, the (x, y) pairs of the units the metric counts (a mean metric: units with a value). */
function pairsOf(metric: string): Record<Variant, Array<[number, number]>> {
  const value = METRIC_VALUES[metric] as UnitValue;
  const of = (variant: Variant) =>
    Array.from({ length: UNITS }, (_, i) => plan(variant, i)).flatMap(({ pre, post }): Array<[number, number]> => {
      const y = value(post);
      return y === null ? [] : [[value(pre) ?? 0, y]];
    });
  return { control: of('control'), treatment: of('treatment') };
}

function expectedCuped(metric: string) {
  const pairs = pairsOf(metric);
  const all = [...pairs.control, ...pairs.treatment];
  const xs = all.map(([x]) => x);
  const theta =
    covariance(
      xs,
      all.map(([, y]) => y),
    ) / covariance(xs, xs);
  const meanX = mean(xs);
  const arms = (['control', 'treatment'] as const).map((variant) => {
    const ys = pairs[variant].map(([, y]) => y);
    const adjusted = pairs[variant].map(([x, y]) => y - theta * (x - meanX));
    const variance = covariance(adjusted, adjusted);
    return { mean: mean(adjusted), varianceOfMean: variance / adjusted.length, reduction: 1 - variance / covariance(ys, ys), observed: mean(ys) };
  });
  return { theta, arms, varianceReduction: mean(arms.map((arm) => arm.reduction)) };
}

function expectAdjusted(result: { cuped: any; per_variant: any[] }, metric: string): void {
  const expected = expectedCuped(metric);
  // A reduction under 2% is applied but said to be negligible (docs/statistics.md §2b).
  const note = expected.varianceReduction < 0.02 ? expect.stringMatching(/^applied, but it removed only/) : null;
  expect(result.cuped, metric).toMatchObject({ applied: true, lookback_days: LOOKBACK_DAYS, note });
  expectClose(result.cuped.theta, expected.theta, 1e-9, `${metric} theta`);
  expectClose(result.cuped.variance_reduction, expected.varianceReduction, 1e-9, `${metric} variance_reduction`);
  expected.arms.forEach((arm, index) => {
    const actual = result.per_variant[index];
    const half = Z * Math.sqrt(arm.varianceOfMean);
    expectClose(actual.posterior.mean, arm.mean, 1e-9, `${metric}[${index}] adjusted mean`);
    expectClose(actual.posterior.credible_interval_95[0], arm.mean - half, 1e-9, `${metric}[${index}] ci[0]`);
    expectClose(actual.posterior.credible_interval_95[1], arm.mean + half, 1e-9, `${metric}[${index}] ci[1]`);
    expectClose(actual.observed_rate, arm.observed, 1e-9, `${metric}[${index}] observed_rate (unadjusted)`);
  });
  const [control, treatment] = expected.arms as [(typeof expected.arms)[0], (typeof expected.arms)[0]];
  const difference = treatment.mean - control.mean;
  const sd = Math.sqrt(control.varianceOfMean + treatment.varianceOfMean);
  const effect = result.per_variant[1].effect;
  expectClose(effect.absolute.mean, difference, 1e-9, `${metric} absolute effect`);
  expectClose(effect.absolute.credible_interval_95[0], difference - Z * sd, 1e-9, `${metric} absolute ci[0]`);
  expectClose(effect.absolute.credible_interval_95[1], difference + Z * sd, 1e-9, `${metric} absolute ci[1]`);
}

/**
 * Sets up the metrics and a CUPED experiment in a workspace of its own, exposes 60 units per
 * variant and sends their events before and after the exposure; leaves the clock at T0 + 6 h.
 */
async function setUpCuped(server: TestServer, workspace: string): Promise<{ key: string; experiment: any }> {
  clock.set(T0);
  const { key, environmentId } = await server.bootstrap(workspace);
  const ids: Record<string, string> = {};
  const revenue = { event_key: 'buy', kind: 'revenue', property_path: 'amount' };
  ids.revenue = await createMetric(server, key, { key: 'revenue', ...revenue, aggregation: 'sum', capping: { type: 'absolute', value: CAP } });
  ids.converted = await createMetric(server, key, { key: 'converted', event_key: 'buy', kind: 'binary' });
  ids.orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
  ids.avg_amount = await createMetric(server, key, { key: 'avg_amount', ...revenue, aggregation: 'mean' });
  ids.revenue_p90 = await createMetric(server, key, { key: 'revenue_p90', ...revenue, aggregation: 'sum', capping: { type: 'percentile', value: 0.9 } });
  ids.aov = await createMetric(server, key, { key: 'aov', kind: 'ratio', numerator_metric_id: ids.revenue, denominator_metric_id: ids.orders });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: 'cuped',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    primary_metric_id: ids.revenue,
    guardrail_metric_ids: [ids.converted, ids.orders, ids.avg_amount, ids.revenue_p90, ids.aov],
    variance_reduction: { method: 'cuped', lookback_days: LOOKBACK_DAYS },
    decision_rule: { method: 'bayesian.always_valid_evalue', posterior_threshold: 0.95, min_sample_per_variant: 50 },
  });
  const units = await exposeExactly(server, key, experiment, { control: UNITS, treatment: UNITS });
  const events: OutgoingEvent[] = [];
  for (const variant of ['control', 'treatment'] as const) {
    (units[variant] ?? []).forEach((unit_id, i) => {
      const { pre, post, outside } = plan(variant, i);
      pre.forEach((amount, j) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 - (2 + 3 * j) * DAY, properties: { amount } }));
      if (outside) events.push({ event_key: 'buy', unit_id, occurred_at: T0 - 9 * DAY, properties: { amount: 77 } });
      post.forEach((amount, j) => events.push({ event_key: 'buy', unit_id, occurred_at: T0 + (j + 1) * HOUR, properties: { amount } }));
    });
  }
  clock.set(T0 + 6 * HOUR);
  await sendEvents(server, key, events);
  return { key, experiment };
}

describeEachStore(
  'CUPED through HTTP',
  (server) => {
    // A read-only fixture, set up once: no test changes its experiment (the test that switches
    // CUPED off sets up a workspace of its own).
    let key: string;
    let experiment: any;
    beforeAll(async () => {
      ({ key, experiment } = await setUpCuped(server(), 'Cuped'));
    });
    beforeEach(() => clock.set(T0 + 6 * HOUR));

    it('validates variance_reduction on create and PATCH, fills the default lookback, and may change while running', async () => {
      clock.set(T0);
      const { key, environmentId } = await server().bootstrap('Cuped, validation');
      const base = {
        environment_id: environmentId,
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      };
      for (const bad of [
        { method: 'cuped', lookback_days: 0 },
        { method: 'cuped', lookback_days: 61 },
        { method: 'cuped', lookback_days: 2.5 },
        { method: 'ratio' },
        { method: 'cuped', extra: 1 },
        'cuped',
      ]) {
        const response = await server().request('POST', '/v1/experiments', {
          key,
          body: { name: 'x', hypothesis: 'y', unit_type: 'user', key: 'bad', ...base, variance_reduction: bad },
        });
        expect(response.status, JSON.stringify(bad)).toBe(422);
        expect(response.headers.get('content-type')).toContain('application/problem+json');
        expect(response.text).toContain('variance_reduction');
      }
      const draft = await createExperiment(server(), key, { ...base, key: 'defaults', variance_reduction: { method: 'cuped' } }, false);
      expect(draft.variance_reduction).toEqual({ method: 'cuped', lookback_days: 14 });
      const plain = await createExperiment(server(), key, { ...base, key: 'plain' }, true);
      expect(plain.variance_reduction).toBeNull();
      const on = await server().request('PATCH', `/v1/experiments/${plain.id}`, { key, body: { variance_reduction: { method: 'cuped', lookback_days: 30 } } });
      expect(on.status, on.text).toBe(200);
      expect(on.body.variance_reduction).toEqual({ method: 'cuped', lookback_days: 30 });
      const bad = await server().request('PATCH', `/v1/experiments/${plain.id}`, { key, body: { variance_reduction: { method: 'cuped', lookback_days: 90 } } });
      expect(bad.status).toBe(422);
      const off = await server().request('PATCH', `/v1/experiments/${plain.id}`, { key, body: { variance_reduction: null } });
      expect(off.body.variance_reduction).toBeNull();
      const audit = await server().request('GET', `/v1/audit-log?target_id=${plain.id}`, { key });
      if (audit.status === 200) expect(JSON.stringify(audit.body)).toContain('variance_reduction');
    });

    it('reports adjusted posteriors, effects, theta and the variance removed, matching the per-unit computation', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      expectAdjusted({ cuped: snapshot.primary_metric.cuped, per_variant: snapshot.per_variant }, 'revenue');
      expectClose(snapshot.guardrails.find((item: any) => item.metric_key === 'revenue_p90').cap_applied, P90, 1e-9, 'p90 cap');
      for (const metric of ['converted', 'orders', 'avg_amount', 'revenue_p90']) {
        expectAdjusted(
          snapshot.guardrails.find((item: any) => item.metric_key === metric),
          metric,
        );
      }
      expect(snapshot.primary_metric.cuped.variance_reduction).toBeGreaterThan(0.1);
      const aov = snapshot.guardrails.find((item: any) => item.metric_key === 'aov');
      expect(aov.cuped).toEqual({
        applied: false,
        lookback_days: LOOKBACK_DAYS,
        theta: null,
        variance_reduction: null,
        note: 'ratio metrics are left unadjusted',
      });
    });

    it('breaks the results down by source beside CUPED, each slice on the unadjusted values', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      const source = snapshot.breakdowns.find((breakdown: any) => breakdown.dimension === 'source');
      // One key logged every exposure: one slice holding every unit.
      const slice = source.values.find((value: any) => value.units === 2 * UNITS);
      expect(slice).toBeDefined();
      for (const variant of ['control', 'treatment'] as const) {
        const ys = pairsOf('revenue')[variant].map(([, y]) => y);
        const arm = slice.per_variant.find((item: any) => item.variant_key === variant);
        expect(arm.sample_size).toBe(UNITS);
        expectClose(arm.posterior.mean, mean(ys), 1e-9, `${variant} slice mean (unadjusted)`);
      }
    });

    it('gives the same numbers when the units are cut into chunks', async () => {
      const whole = await computeById(server().ctx, experiment.id, { trigger: 'cli', chunkUnits: null });
      const chunked = await computeById(server().ctx, experiment.id, { trigger: 'cli', chunkUnits: 7 });
      expectClose(chunked?.primary_metric?.cuped?.theta, whole?.primary_metric?.cuped?.theta as number, 1e-9, 'theta across chunks');
      expect(chunked?.per_variant.map((variant) => variant.posterior.mean)).toEqual(
        whole?.per_variant.map((variant) => variant.posterior.mean).map((value) => expect.closeTo(value as number, 9)),
      );
    });

    it('reports the unadjusted analysis and cuped null once variance_reduction is switched off', async () => {
      const own = await setUpCuped(server(), 'Cuped, switched off');
      // A snapshot with CUPED first, as the experiment had before it was switched off.
      await compute(server(), own.key, own.experiment.id);
      const off = await server().request('PATCH', `/v1/experiments/${own.experiment.id}`, { key: own.key, body: { variance_reduction: null } });
      expect(off.status, off.text).toBe(200);
      const snapshot = await compute(server(), own.key, own.experiment.id);
      expect(snapshot.primary_metric.cuped).toBeNull();
      const ys = pairsOf('revenue').control.map(([, y]) => y);
      expectClose(snapshot.per_variant[0].posterior.mean, mean(ys), 1e-9, 'unadjusted mean');
      const interval = snapshot.per_variant[0].posterior.credible_interval_95;
      expectClose(interval[1] - interval[0], 2 * Z * Math.sqrt(covariance(ys, ys) / ys.length), 1e-9, 'unadjusted width');
    });
  },
  { clock },
);

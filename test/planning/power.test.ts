/**
 * POST /v1/planning/power through HTTP (docs/experiments.md "Planning"). The history's expected
 * baselines are computed here from the events the scenario sends (per-unit values as plain
 * arrays), independently of the store's SQL; the plan's numbers from power.ts's formulas are
 * checked against SciPy in src/stats/planning.test.ts.
 */
import { beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../support/each-dialect.js';
import {
  assignUnits,
  covariance,
  createExperiment,
  createMetric,
  DAY,
  expectClose,
  HOUR,
  ManualClock,
  mean,
  sendEvents,
  sum,
  type OutgoingEvent,
} from '../analysis/support.js';

const T0 = Date.UTC(2032, 6, 1, 12);
const clock = new ManualClock(T0);
const UNITS = 120;

/**
 * Unit i: first seen by a visit 1..10 days before T0; every fourth buys within its 1-day window,
 * every sixth only 2 days later; every third bought 20 days before T0, before the history's 14
 * days (so it is not seen then) but inside a 30-day CUPED lookback.
 */
function unitEvents(i: number): { events: OutgoingEvent[]; bought: number[]; before: number } {
  const seen = T0 - ((i % 10) + 1) * DAY + i * 60_000;
  const unit_id = `h-${i}`;
  const events: OutgoingEvent[] = [{ event_key: 'visit', unit_id, occurred_at: seen }];
  const bought: number[] = [];
  const before = i % 3 === 0 ? (i % 5) + 1 + (i % 4 === 0 ? 2 : 0) : 0;
  if (before > 0) events.push({ event_key: 'purchase', unit_id, occurred_at: T0 - 20 * DAY, properties: { amount: before } });
  if (i % 4 === 0) {
    const amounts = [(i % 7) + 1, ...(i % 8 === 0 ? [3] : [])];
    amounts.forEach((amount, k) => events.push({ event_key: 'purchase', unit_id, occurred_at: seen + (k + 1) * HOUR, properties: { amount } }));
    bought.push(...amounts);
  } else if (i % 6 === 0 && seen + 2 * DAY < T0) {
    events.push({ event_key: 'purchase', unit_id, occurred_at: seen + 2 * DAY, properties: { amount: 50 } });
  }
  return { events, bought, before };
}

const scenario = Array.from({ length: UNITS }, (_, i) => unitEvents(i));

describeEachStore(
  'planning power',
  (server) => {
    let key: string;
    let environmentId: string;
    let purchase: string;
    let revenue: string;
    let never: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap());
      purchase = await createMetric(server(), key, {
        key: 'purchase',
        name: 'Purchase conversion',
        event_key: 'purchase',
        kind: 'binary',
        unit_dedup_window: 'P1D',
      });
      revenue = await createMetric(server(), key, {
        key: 'revenue',
        event_key: 'purchase',
        kind: 'revenue',
        aggregation: 'sum',
        property_path: 'amount',
        unit_dedup_window: 'P1D',
      });
      never = await createMetric(server(), key, { key: 'signup', name: 'Signup', event_key: 'signup', kind: 'binary' });
      await sendEvents(
        server(),
        key,
        scenario.flatMap((unit) => unit.events),
      );
      // One unit only exposed (no event) in a running experiment of the environment, 3 days ago.
      await createExperiment(server(), key, {
        key: 'running-one',
        environment_id: environmentId,
        variants: [
          { key: 'a', weight: 50 },
          { key: 'b', weight: 50 },
        ],
      });
      clock.set(T0 - 3 * DAY);
      await assignUnits(server(), key, 'running-one', ['exposed-only']);
      clock.set(T0);
    });

    const plan = (body: Record<string, unknown>) =>
      server().request('POST', '/v1/planning/power', {
        key,
        body: {
          environment_id: environmentId,
          variants: [
            { key: 'control', weight: 50 },
            { key: 'treatment', weight: 50 },
          ],
          ...body,
        },
      });

    it('baselines from history equal the direct computation over the same events', async () => {
      const response = await plan({ metric_ids: [purchase, revenue], minimum_detectable_effect: 0.1 });
      expect(response.status, response.text).toBe(200);
      const units = UNITS + 1;
      const converted = scenario.filter((unit) => unit.bought.length > 0).length;
      const rate = converted / units;
      const [binary, money] = response.body.metrics;
      expect(binary.baseline).toMatchObject({ units, source: 'history', variance_reduction: null });
      expectClose(binary.baseline.mean, rate, 1e-12, 'rate');
      expectClose(binary.baseline.variance, rate * (1 - rate), 1e-12, 'p (1 - p)');
      expect(binary.baseline.events).toBe(sum(scenario.map((unit) => unit.bought.length)));
      const values = [...scenario.map((unit) => sum(unit.bought)), 0];
      const m = mean(values);
      expectClose(money.baseline.mean, m, 1e-9, 'revenue mean');
      expectClose(money.baseline.variance, sum(values.map((v) => (v - m) ** 2)) / (units - 1), 1e-9, 'revenue variance');
      expect(response.body.daily_units).toEqual({ value: units / 14, source: 'history', history_units: units });
      expect(binary.days_needed).toBe(Math.ceil(binary.total_units / (units / 14)));
      expect(response.body.summary).toMatch(/^About [\d,]+ days at 8\.6 new units a day to detect a 10% lift in Purchase conversion with 80% power/);
    });

    it('with CUPED, the variance of y - theta x over the same units, the covariate from the lookback before each was first seen', async () => {
      const response = await plan({ metric_ids: [revenue], variance_reduction: { method: 'cuped', lookback_days: 30 } });
      expect(response.status, response.text).toBe(200);
      const y = [...scenario.map((unit) => sum(unit.bought)), 0];
      const x = [...scenario.map((unit) => unit.before), 0];
      const theta = covariance(x, y) / covariance(x, x);
      const adjusted = y.map((value, i) => value - theta * ((x[i] as number) - mean(x)));
      const plain = covariance(y, y);
      const baseline = response.body.metrics[0].baseline;
      expectClose(baseline.variance, covariance(adjusted, adjusted), 1e-9, 'CUPED variance');
      expectClose(baseline.variance_reduction, 1 - covariance(adjusted, adjusted) / plain, 1e-9, 'variance reduction');
      expect(baseline.variance_reduction).toBeGreaterThan(0);
    });

    it('the underpowered warning reads the metric’s history and answers the units per variant the endpoint answers', async () => {
      const decision_rule = { method: 'frequentist.sequential_msprt', minimum_detectable_effect: 0.05, min_sample_per_variant: 1000 };
      const variants = [
        { key: 'a', weight: 50 },
        { key: 'b', weight: 50 },
      ];
      const draft = await createExperiment(
        server(),
        key,
        { key: 'draft-one', environment_id: environmentId, decision_rule, primary_metric_id: purchase, variants },
        false,
      );
      const [warning] = draft.warnings;
      const rate = scenario.filter((unit) => unit.bought.length > 0).length / (UNITS + 1);
      expect(warning).toMatchObject({ code: 'underpowered', assumed_baseline_rate: null, baseline_source: 'history' });
      expectClose(warning.baseline_mean, rate, 1e-12, 'the warning’s rate');
      expect(warning.message).toContain(`at the primary metric’s ${+(rate * 100).toPrecision(3)}% conversion rate over the last 14 days (121 units)`);
      const fromHistory = await plan({ metric_ids: [purchase], decision_rule });
      expect(fromHistory.status, fromHistory.text).toBe(200);
      expect(fromHistory.body.metrics[0].units_per_variant).toBe(warning.estimated_units_per_variant);
      // A given baseline at the same rate: the same number again.
      const given = await plan({ metric_ids: [purchase], decision_rule, baseline: { mean: rate, variance: rate * (1 - rate) }, daily_units: 5000 });
      expect(given.status, given.text).toBe(200);
      expect(given.body.metrics[0].units_per_variant).toBe(warning.estimated_units_per_variant);
      expect(given.body.metrics[0].baseline).toMatchObject({ source: 'given', units: null, events: null });
      expect(given.body.daily_units).toEqual({ value: 5000, source: 'given', history_units: null });
      // Without history (a metric whose event never occurred) the warning assumes a 10% rate.
      const assumed = await createExperiment(
        server(),
        key,
        { key: 'draft-two', environment_id: environmentId, decision_rule, primary_metric_id: never, variants },
        false,
      );
      expect(assumed.warnings[0]).toMatchObject({ assumed_baseline_rate: 0.1, baseline_source: 'assumed' });
    });

    it('duration_days answers the MDE reachable then; the series run over the horizon', async () => {
      const response = await plan({ metric_ids: [purchase], baseline: { mean: 0.1, variance: 0.09 }, daily_units: 4000, duration_days: 21 });
      expect(response.status, response.text).toBe(200);
      const [metric] = response.body.metrics;
      expect(metric.mde_by_day).toHaveLength(21);
      expect(metric.minimum_detectable_effect).toBeCloseTo(metric.mde_by_day[20].mde, 9);
      expect(metric.days_needed).toBeLessThanOrEqual(21);
      expect(metric.power_by_day[20].power).toBeGreaterThanOrEqual(0.8 - 1e-6);
      expect(response.body.summary).toMatch(/^In 21 days at 4,000 new units a day, the Bayesian rule/);
    });

    it('three variants take longer than two; the always-valid rules split alpha over the treatments', async () => {
      const body = { metric_ids: [purchase], baseline: { mean: 0.1, variance: 0.09 }, daily_units: 4000, minimum_detectable_effect: 0.05 };
      const threeArms = [
        { key: 'c', weight: 50 },
        { key: 't1', weight: 25 },
        { key: 't2', weight: 25 },
      ];
      const two = (await plan(body)).body.metrics[0];
      const three = await plan({ ...body, variants: threeArms });
      expect(three.status, three.text).toBe(200);
      // The posterior rule: the treatments hold a quarter each, the control half, so the smallest arm needs fewer units but the whole more.
      expect(three.body.metrics[0].units_per_variant).toBeLessThan(two.units_per_variant);
      expect(three.body.metrics[0].days_needed).toBeGreaterThan(two.days_needed);
      const msprt = { ...body, decision_rule: { method: 'frequentist.sequential_msprt' } };
      const equalThirds = [
        { key: 'c', weight: 34 },
        { key: 't1', weight: 33 },
        { key: 't2', weight: 33 },
      ];
      const msprtTwo = (await plan(msprt)).body.metrics[0];
      const msprtThree = (await plan({ ...msprt, variants: equalThirds })).body.metrics[0];
      expect(msprtThree.units_per_variant).toBeGreaterThan(msprtTwo.units_per_variant);
    });

    it('problems name the field: an MDE of 0, weights not summing to 100, a metric without history', async () => {
      const zero = await plan({ metric_ids: [purchase], minimum_detectable_effect: 0 });
      expect(zero.status).toBe(422);
      expect(zero.body.errors.map((error: { pointer: string }) => error.pointer)).toContain('/minimum_detectable_effect');
      const weights = await plan({
        metric_ids: [purchase],
        variants: [
          { key: 'a', weight: 60 },
          { key: 'b', weight: 50 },
        ],
      });
      expect(weights.status).toBe(422);
      expect(weights.body.errors).toContainEqual({ pointer: '/variants', message: 'weights must sum to 100, got 110' });
      const none = await plan({ metric_ids: [purchase, never] });
      expect(none.status).toBe(422);
      expect(none.headers.get('content-type')).toContain('application/problem+json');
      expect(none.body.errors).toHaveLength(1);
      expect(none.body.errors[0].pointer).toBe('/metric_ids/1');
      expect(none.body.errors[0].message).toContain('"Signup" has no history');
      expect(none.body.errors[0].message).toContain('give a baseline');
      const withBaseline = await plan({ metric_ids: [never], baseline: { mean: 0.05, variance: 0.0475 } });
      expect(withBaseline.status, withBaseline.text).toBe(200);
      const otherEnvironment = await plan({ metric_ids: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'], environment_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
      expect(otherEnvironment.status).toBe(422);
      expect(otherEnvironment.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/environment_id', '/metric_ids/0']);
    });
  },
  { clock },
);

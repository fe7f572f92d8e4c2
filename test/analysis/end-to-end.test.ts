import { beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { ApiResponse, TestServer } from '../support/server.js';
import { PHASE_CLOCK, UNITS, plannedEvents, type Phase, type ScenarioVariant } from './scenario.js';
import { DAY, HOUR, ManualClock, compute, createExperiment, createMetric, exposeExactly, expectClose, sendEvents, type OutgoingEvent } from './support.js';

/**
 * Expected snapshot of the scenario in ./scenario.ts, computed independently by
 * `python3 scripts/reference/analysis_e2e.py` (SciPy 1.17: scipy.stats.beta quantiles, prob_best
 * and expected loss by numerical integration with scipy.integrate.quad, normal posteriors with
 * scipy.stats.norm, SRM with scipy.stats.chisquare).
 * Paste the script's output here when the scenario changes (the script takes about a minute).
 */
const EXPECTED = {
  metrics: {
    purchased: {
      control: {
        sample_size: 200,
        conversions: 20,
        observed_rate: 0.1,
        mean: 0.10396039603960396,
        ci: [0.06584585785152808, 0.14948653354641006],
        prob_best: 0.0023438677403826965,
        expected_loss: 0.09889467016506948,
      },
      treatment: {
        sample_size: 210,
        conversions: 42,
        observed_rate: 0.2,
        mean: 0.2028301886792453,
        ci: [0.15158585334503694, 0.25938254622746293],
        prob_best: 0.9976561322596159,
        expected_loss: 2.487752542870026e-5,
      },
    },
    revenue: {
      control: {
        sample_size: 200,
        conversions: 16,
        observed_rate: 3.13125,
        mean: 3.13125,
        ci: [1.365030407549463, 4.897469592450537],
        prob_best: 0.0013817982632302066,
        expected_loss: 5.174189312544913,
      },
      treatment: {
        sample_size: 210,
        conversions: 38,
        observed_rate: 8.304761904761905,
        mean: 8.304761904761905,
        ci: [5.413556729214948, 11.195967080308863],
        prob_best: 0.998618201736769,
        expected_loss: 0.000677407783035819,
      },
    },
    load_time: {
      control: {
        sample_size: 100,
        conversions: 100,
        observed_rate: 160.7,
        mean: 160.7,
        ci: [153.27601040884912, 168.12398959115086],
        prob_best: 0.8169181558884155,
        expected_loss: 0.5282821590353726,
      },
      treatment: {
        sample_size: 105,
        conversions: 105,
        observed_rate: 155.9142857142857,
        mean: 155.9142857142857,
        ci: [148.66034723342085, 163.16822419515057],
        prob_best: 0.18308184411158165,
        expected_loss: 5.313996444749582,
      },
    },
    pageviews: {
      control: {
        sample_size: 200,
        conversions: 100,
        observed_rate: 1.5,
        mean: 1.5,
        ci: [1.2695971219458786, 1.7304028780541214],
        prob_best: 0.5115793664834705,
        expected_loss: 0.06308839057400871,
      },
      treatment: {
        sample_size: 210,
        conversions: 105,
        observed_rate: 1.4952380952380953,
        mean: 1.4952380952380953,
        ci: [1.2710004535891537, 1.7194757368870366],
        prob_best: 0.4884206335165291,
        expected_loss: 0.06785029533591333,
      },
    },
  },
  srm_chi_squared_p: 0.6214016666266909,
  late_event_count: 17,
} as const;

const T0 = Date.UTC(2031, 4, 1, 12);
const clock = new ManualClock(T0);
/** Exact two-arm forms against SciPy's numerical integration. */
const TOLERANCE = 1e-9;

function eventsOfPhase(units: Record<string, string[]>, phase: Phase): OutgoingEvent[] {
  const events: OutgoingEvent[] = [];
  for (const variant of Object.keys(UNITS) as ScenarioVariant[]) {
    (units[variant] ?? []).forEach((unit_id, i) => {
      for (const event of plannedEvents(variant, i)) {
        if (event.phase === phase) events.push({ event_key: event.event_key, unit_id, occurred_at: T0 + event.offset, properties: event.properties });
      }
    });
  }
  return events;
}

function expectVariant(actual: any, expected: any, what: string): void {
  expect(actual.sample_size, `${what} sample_size`).toBe(expected.sample_size);
  expect(actual.conversions, `${what} conversions`).toBe(expected.conversions);
  expectClose(actual.observed_rate, expected.observed_rate, TOLERANCE, `${what} observed_rate`);
  expectClose(actual.posterior.mean, expected.mean, TOLERANCE, `${what} posterior.mean`);
  expectClose(actual.posterior.credible_interval_95[0], expected.ci[0], TOLERANCE, `${what} ci[0]`);
  expectClose(actual.posterior.credible_interval_95[1], expected.ci[1], TOLERANCE, `${what} ci[1]`);
  expectClose(actual.prob_best, expected.prob_best, TOLERANCE, `${what} prob_best`);
  expectClose(actual.expected_loss_if_stop_now, expected.expected_loss, TOLERANCE, `${what} expected_loss_if_stop_now`);
}

function expectMetric(perVariant: any[], metricKey: keyof typeof EXPECTED.metrics): void {
  expect(perVariant.map((variant) => [variant.variant_key, variant.is_control])).toEqual([
    ['control', true],
    ['treatment', false],
  ]);
  expectVariant(perVariant[0], EXPECTED.metrics[metricKey].control, `${metricKey}/control`);
  expectVariant(perVariant[1], EXPECTED.metrics[metricKey].treatment, `${metricKey}/treatment`);
}

/** The scenario and what the API answered along it, in order. */
interface EndToEnd {
  key: string;
  experiment: any;
  /** GET results before any computation. */
  beforeFirst: ApiResponse;
  /** The first computation, then GET results, a recomputation and GET results again. */
  first: any;
  served: ApiResponse;
  again: any;
  latest: ApiResponse;
}

/**
 * Sets up metrics and a running experiment with a primary metric and guardrails, exposes units
 * and takes their events through the API (phases A, B and C of ./scenario.ts), then computes the
 * snapshot twice, reading the latest results after each; leaves the clock at phase C.
 */
async function runScenario(server: TestServer): Promise<EndToEnd> {
  clock.set(T0);
  const boot = await server.bootstrap('Shop');
  const key = boot.key;
  const otherKey = (await server.bootstrap('Other shop')).key;
  const purchased = await createMetric(server, key, { key: 'purchased', event_key: 'purchase', kind: 'binary' });
  const revenue = await createMetric(server, key, {
    key: 'revenue',
    event_key: 'purchase',
    kind: 'revenue',
    aggregation: 'sum',
    property_path: 'order.total',
  });
  const loadTime = await createMetric(server, key, {
    key: 'load_time',
    event_key: 'page_load',
    kind: 'duration',
    aggregation: 'mean',
    property_path: '$.timing["load ms"]',
    unit_dedup_window: 'P1D',
  });
  const pageviews = await createMetric(server, key, { key: 'pageviews', event_key: 'page_load', kind: 'count' });
  const experiment = await createExperiment(server, key, {
    environment_id: boot.environmentId,
    key: 'checkout',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    primary_metric_id: purchased,
    guardrail_metric_ids: [revenue, loadTime, pageviews],
    decision_rule: { posterior_threshold: 0.95, min_sample_per_variant: 100 },
  });
  const beforeFirst = await server.request('GET', `/v1/experiments/${experiment.id}/results`, { key });
  const units = await exposeExactly(server, key, experiment, { ...UNITS });
  const exposed = [...(units.control ?? []), ...(units.treatment ?? [])];
  for (const phase of ['A', 'B', 'C'] as Phase[]) {
    clock.set(T0 + PHASE_CLOCK[phase]);
    const noise: OutgoingEvent[] =
      phase === 'A'
        ? [
            // A unit that was never exposed converts: it is in no variant.
            { event_key: 'purchase', unit_id: 'never-exposed', occurred_at: T0 + HOUR, properties: { order: { total: 1000 } } },
          ]
        : phase === 'C'
          ? [
              // Late, but not from an exposed unit, or not of a metric's event key: not counted.
              { event_key: 'purchase', unit_id: 'never-exposed', occurred_at: T0 + 9 * DAY },
              { event_key: 'signup', unit_id: exposed[0] as string, occurred_at: T0 + 9 * DAY },
            ]
          : [];
    await sendEvents(server, key, [...eventsOfPhase(units, phase), ...noise]);
  }
  // Another workspace's events for the very same unit ids must not leak in.
  clock.set(T0 + PHASE_CLOCK.A);
  await sendEvents(
    server,
    otherKey,
    exposed.map((unit_id) => ({ event_key: 'purchase', unit_id, occurred_at: T0 + HOUR, properties: { order: { total: 500 } } })),
  );
  clock.set(T0 + PHASE_CLOCK.C);
  const first = await compute(server, key, experiment.id, 'incremental');
  const served = await server.request('GET', `/v1/experiments/${experiment.id}/results`, { key });
  const again = await compute(server, key, experiment.id, 'incremental');
  const latest = await server.request('GET', `/v1/experiments/${experiment.id}/results`, { key });
  return { key, experiment, beforeFirst, first, served, again, latest };
}

describeEachDialect(
  'analysis end to end (expected values: scripts/reference/analysis_e2e.py, SciPy)',
  (server) => {
    // Set up and computed once; the tests only read (no test computes: the audit test counts the
    // scenario's two computations).
    let key: string;
    let experiment: any;
    let scenario: EndToEnd;
    beforeAll(async () => {
      scenario = await runScenario(server());
      ({ key, experiment } = scenario);
    });
    beforeEach(() => clock.set(T0 + PHASE_CLOCK.C));

    it('answers 404 before the first snapshot', () => {
      const response = scenario.beforeFirst;
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.body.detail).toMatch(/no snapshot yet/);
    });

    it('computes a snapshot whose numbers match the independent SciPy computation', () => {
      const snapshot = scenario.first;
      expect(snapshot).toMatchObject({
        experiment_id: experiment.id,
        computed_at: new Date(T0 + PHASE_CLOCK.C).toISOString(),
        trigger: 'api',
        primary_metric: { key: 'purchased', kind: 'binary', aggregation: 'count' },
        late_event_count: EXPECTED.late_event_count,
        peek_count_at_computation: 0,
        weights_changed_since_start: false,
        srm_warning: false,
        traffic: [
          { variant_key: 'control', weight: 50, exposed_units: UNITS.control },
          { variant_key: 'treatment', weight: 50, exposed_units: UNITS.treatment },
        ],
      });
      expectClose(snapshot.srm_chi_squared_p, EXPECTED.srm_chi_squared_p, 1e-12, 'srm_chi_squared_p');
      expectMetric(snapshot.per_variant, 'purchased');
      expect(snapshot.guardrails.map((guardrail: any) => guardrail.metric_key)).toEqual(['revenue', 'load_time', 'pageviews']);
      expectMetric(snapshot.guardrails[0].per_variant, 'revenue');
      expectMetric(snapshot.guardrails[1].per_variant, 'load_time');
      expectMetric(snapshot.guardrails[2].per_variant, 'pageviews');
      // prob_best(treatment) = 0.99766 >= 0.95 with both arms past 100 units.
      expect(snapshot.decision_rule_satisfied).toBe(true);
      expect(snapshot.decision).toMatchObject({
        verdict: 'winner',
        variant_key: 'treatment',
        method: 'bayesian.posterior_threshold',
        days_elapsed: 17,
        always_valid_p_values: null,
      });
      expect(snapshot.decision.reason).toMatch(/^treatment has a 99\.77% chance of being best, at least the 95% the rule asks for$/);
    });

    it('serves the same snapshot as the latest results, and a recomputation gives the same numbers', () => {
      const { served: first, again, latest } = scenario;
      expect(first.status).toBe(200);
      expect(first.body).toEqual(scenario.first);
      // How each was computed differs: the second refresh found nothing new.
      const strip = ({ id: _id, computation: _computation, ...rest }: any) => rest;
      expect(strip(again)).toEqual(strip(first.body));
      expect(again.computation).toMatchObject({ mode: 'incremental', events_read: 0, units_refreshed: 0 });
      expect(latest.body.id).toBe(again.id);
    });

    it('audit-logs each computation and logs no peek for reads with an API key', async () => {
      const audit = await server().request('GET', `/v1/audit?target_id=${experiment.id}`, { key });
      const actions = audit.body.data.map((entry: any) => entry.action);
      expect(actions.filter((action: string) => action === 'experiment.results_computed')).toHaveLength(2);
      expect(actions).not.toContain('experiment.results_peeked');
      const computed = audit.body.data.find((entry: any) => entry.action === 'experiment.results_computed');
      expect(computed).toMatchObject({ target_type: 'experiment', actor_id: expect.any(String), payload: { via: 'bearer', verdict: 'winner' } });
    });
  },
  { clock },
);

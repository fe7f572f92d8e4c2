import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { DAY, HOUR, ManualClock, compute, createExperiment, createMetric, exposeExactly, sendEvents } from './support.js';

/**
 * What the snapshot says about its own health, made true (issue #33 item 9): late events split by
 * whether they count, and a ratio metric never reported as capped.
 */
const T0 = Date.UTC(2033, 6, 1, 8);
const clock = new ManualClock(T0);

describeEachDialect(
  'snapshot health fields',
  (server) => {
    let key: string;
    let environmentId: string;

    beforeAll(async () => {
      clock.set(T0);
      ({ key, environmentId } = await server().bootstrap('Health'));
    });

    it('splits late events into those a metric counts, pre-exposure backfills and those outside every window', async () => {
      clock.set(T0);
      const signedUp = await createMetric(server(), key, { key: 'signed_up', event_key: 'signup', kind: 'binary', unit_dedup_window: 'P1D' });
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'late',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: signedUp,
      });
      const units = await exposeExactly(server(), key, experiment, { control: 4, treatment: 4 }, 'late');
      const [a, b, c, d] = units.control as [string, string, string, string];
      // Received at T0 + 10 d: late (7 to 30 days after they occurred) unless noted.
      clock.set(T0 + 10 * DAY);
      await sendEvents(server(), key, [
        { event_key: 'signup', unit_id: a, occurred_at: T0 - HOUR }, // a backfill of before the exposure
        { event_key: 'signup', unit_id: b, occurred_at: T0 + HOUR }, // inside the 1-day window: counted
        { event_key: 'signup', unit_id: c, occurred_at: T0 + 2 * DAY }, // after the window
        { event_key: 'signup', unit_id: d, occurred_at: T0 + 9 * DAY }, // one day old: not late
        { event_key: 'other', unit_id: d, occurred_at: T0 + HOUR }, // no metric reads this key
      ]);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.late_event_count).toBe(3);
      expect(snapshot.late_events).toEqual({ counted: 1, before_exposure: 1, outside_window: 1 });
      // The one counted late event is the one conversion the metric shows.
      expect(snapshot.per_variant.map((variant: any) => variant.conversions)).toEqual([1, 0]);
    });

    it('reports a ratio metric as uncapped while its capped numerator reports its cap', async () => {
      clock.set(T0);
      const revenue = await createMetric(server(), key, {
        key: 'revenue',
        event_key: 'buy',
        kind: 'revenue',
        aggregation: 'sum',
        property_path: 'amount',
        capping: { type: 'absolute', value: 100 },
      });
      const orders = await createMetric(server(), key, { key: 'orders', event_key: 'buy', kind: 'count' });
      const perOrder = await createMetric(server(), key, {
        key: 'revenue_per_order',
        kind: 'ratio',
        numerator_metric_id: revenue,
        denominator_metric_id: orders,
      });
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'ratio-cap',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: perOrder,
        guardrail_metric_ids: [revenue],
      });
      const units = await exposeExactly(server(), key, experiment, { control: 3, treatment: 3 }, 'ratio');
      clock.set(T0 + 2 * HOUR);
      await sendEvents(
        server(),
        key,
        [...(units.control ?? []), ...(units.treatment ?? [])].map((unit_id, i) => ({
          event_key: 'buy',
          unit_id,
          occurred_at: T0 + HOUR,
          properties: { amount: 50 + 40 * i },
        })),
      );
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.primary_metric).toMatchObject({ key: 'revenue_per_order', kind: 'ratio', cap_applied: null });
      expect(snapshot.guardrails[0]).toMatchObject({ metric_key: 'revenue', cap_applied: 100 });
      // The numerator's cap still applies inside the ratio: treatment's amounts 170, 210, 250 count as 100 each.
      expect(snapshot.per_variant[1].observed_rate).toBe(100);
    });
  },
  { clock },
);

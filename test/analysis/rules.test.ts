import { beforeAll, expect, it } from 'vitest';
import { computeById } from '../../src/features/analysis/service.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { HOUR, MINUTE, ManualClock, compute, createExperiment, createMetric, exposeExactly, sendEvents } from './support.js';

const T0 = Date.UTC(2031, 6, 1, 9);
const clock = new ManualClock(T0);
const twoVariants = [
  { key: 'control', weight: 50, is_control: true },
  { key: 'treatment', weight: 50 },
];

describeEachDialect(
  'analysis: which units and events count',
  (server) => {
    let key: string;
    let environmentId: string;
    let clicked: string;
    let clicks: string;

    beforeAll(async () => {
      clock.set(T0);
      ({ key, environmentId } = await server().bootstrap('Rules'));
      clicked = await createMetric(server(), key, { key: 'clicked', event_key: 'click', kind: 'binary', unit_dedup_window: 'PT1H' });
      clicks = await createMetric(server(), key, { key: 'clicks', event_key: 'click', kind: 'count', unit_dedup_window: 'PT1H' });
    });

    it('counts events from the exposure up to (not including) the end of the window, and only live exposures', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'window',
        variants: twoVariants,
        primary_metric_id: clicked,
        guardrail_metric_ids: [clicks],
      });
      const units = await exposeExactly(server(), key, experiment, { control: 2, treatment: 2 }, 'w');
      const [c0, c1] = units.control as [string, string];
      const [t0, t1] = units.treatment as [string, string];
      // Forced re-bucket of both treatment units; t0 is assigned again two hours later (same
      // variant: same hash), t1 never comes back.
      clock.set(T0 + 2 * HOUR);
      for (const unit of [t0, t1]) expect((await server().request('DELETE', `/v1/assignments/window/${unit}`, { key })).status).toBe(204);
      const again = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'window', unit_id: t0 } });
      expect(again.body.variant).toBe('treatment');

      clock.set(T0 + 3 * HOUR);
      const click = (unit_id: string, at: number) => ({ event_key: 'click', unit_id, occurred_at: at });
      await sendEvents(server(), key, [
        click(c0, T0 - MINUTE), // before the exposure
        click(c0, T0 + 59 * MINUTE), // inside
        click(c0, T0 + HOUR), // the window is half-open: exposed_at + 1 h is out
        click(c0, T0 + HOUR + MINUTE),
        click(c1, T0), // at the exposure: in
        click(t0, T0 + 10 * MINUTE), // in the superseded exposure's window only
        click(t0, T0 + 2 * HOUR + 5 * MINUTE), // in the new exposure's window
        click(t1, T0 + 5 * MINUTE), // t1 has no live exposure
      ]);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.traffic).toEqual([
        { variant_key: 'control', weight: 50, exposed_units: 2 },
        { variant_key: 'treatment', weight: 50, exposed_units: 1 },
      ]);
      expect(snapshot.per_variant.map((v: any) => [v.variant_key, v.sample_size, v.conversions])).toEqual([
        ['control', 2, 2],
        ['treatment', 1, 1],
      ]);
      const counts = snapshot.guardrails[0].per_variant;
      expect(counts.map((v: any) => [v.variant_key, v.sample_size, v.conversions, v.observed_rate])).toEqual([
        ['control', 2, 2, 1],
        ['treatment', 1, 1, 1],
      ]);
      // One unit has no variance estimate: no interval and no comparison rather than made-up numbers.
      expect(counts[1]).toMatchObject({ posterior: { mean: 1, credible_interval_95: null }, prob_best: null, expected_loss_if_stop_now: null });
      expect(counts[0].posterior.credible_interval_95).toEqual([1, 1]);

      // Chunking the units (one per query here) must not change a single number.
      const chunked = await computeById(server().ctx, experiment.id, { trigger: 'cli', chunkUnits: 1 });
      expect(chunked?.per_variant).toEqual(snapshot.per_variant);
      expect(chunked?.guardrails).toEqual(snapshot.guardrails);
      expect(chunked?.traffic).toEqual(snapshot.traffic);
    });

    it('ignores events that occur after the experiment stopped, in every later snapshot', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'capped',
        variants: twoVariants,
        primary_metric_id: clicked,
      });
      const units = await exposeExactly(server(), key, experiment, { control: 2, treatment: 1 }, 'k');
      const [k0, k1] = units.control as [string, string];
      clock.set(T0 + HOUR);
      expect((await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'inconclusive' } })).status).toBe(200);
      clock.set(T0 + 3 * HOUR);
      await sendEvents(server(), key, [
        { event_key: 'click', unit_id: k0, occurred_at: T0 + 30 * MINUTE },
        { event_key: 'click', unit_id: k1, occurred_at: T0 + HOUR + 5 * MINUTE },
      ]);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.per_variant[0]).toMatchObject({ variant_key: 'control', sample_size: 2, conversions: 1 });
      expect(snapshot.decision.days_elapsed).toBeCloseTo(1 / 24, 12);
    });
  },
  { clock },
);

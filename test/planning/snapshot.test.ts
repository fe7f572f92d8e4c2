/**
 * Every snapshot's `planning` block through HTTP (docs/statistics.md "9a. Planning an
 * experiment"): days elapsed, the traffic seen, the days left to min_sample_per_variant, and the
 * MDE reachable now, from the control's own conversion rate, with the formulas of power.ts
 * (checked against SciPy in src/stats/planning.test.ts).
 */
import { beforeAll, expect, it } from 'vitest';
import { resolveDecisionRule } from '../../src/stats/decision.js';
import { mdeAtUnits, unitsNeeded } from '../../src/stats/planning.js';
import { describeEachStore } from '../support/each-dialect.js';
import { compute, createExperiment, createMetric, DAY, exposeExactly, HOUR, ManualClock, sendEvents, TWO_ARMS } from '../analysis/support.js';

const T0 = Date.UTC(2032, 7, 1, 12);
const clock = new ManualClock(T0);
const PER_ARM = 100;

describeEachStore(
  'snapshot planning block',
  (server) => {
    let key: string;
    let environmentId: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap());
    });

    it('reports days elapsed, traffic, days to the planned sample and the MDE reachable now', async () => {
      clock.set(T0);
      const metric = await createMetric(server(), key, { key: 'bought', name: 'Bought', event_key: 'buy', kind: 'binary' });
      const decision_rule = { method: 'frequentist.sequential_msprt' as const, minimum_detectable_effect: 0.5, min_sample_per_variant: 1000 };
      const experiment = await createExperiment(server(), key, {
        key: 'planned',
        environment_id: environmentId,
        variants: TWO_ARMS,
        primary_metric_id: metric,
        decision_rule,
      });
      const units = await exposeExactly(server(), key, { key: 'planned', variants: TWO_ARMS }, { control: PER_ARM, treatment: PER_ARM });
      // 20 of the control's 100 units convert, 30 of the treatment's.
      const buyers = [...(units.control ?? []).slice(0, 20), ...(units.treatment ?? []).slice(0, 30)];
      clock.set(T0 + 2 * DAY);
      await sendEvents(
        server(),
        key,
        buyers.map((unit_id) => ({ event_key: 'buy', unit_id, occurred_at: T0 + HOUR })),
      );
      const snapshot = await compute(server(), key, experiment.id);
      const rule = resolveDecisionRule(decision_rule);
      const plan = { rule, weights: { control: 50, treatments: [50] }, metric: { mean: 0.2, variance: 0.16, binary: true } };
      const needed = unitsNeeded(plan) as number;
      expect(snapshot.planning.days_elapsed).toBeCloseTo(2, 9);
      expect(snapshot.planning.daily_units).toBeCloseTo(100, 9);
      // 900 more units per arm at 50 a day.
      expect(snapshot.planning.days_remaining).toBeCloseTo(18, 9);
      expect(snapshot.planning.mde_at_current_sample).toBeCloseTo(mdeAtUnits(plan, PER_ARM) as number, 9);
      expect(snapshot.planning.expected_days_to_mde).toBeCloseTo((needed - PER_ARM) / 50, 9);
      const latest = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key });
      expect(latest.body.planning).toEqual(snapshot.planning);
    });

    it('without a primary metric: traffic and days remaining, no MDE', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, { key: 'unplanned', environment_id: environmentId, variants: TWO_ARMS });
      await exposeExactly(server(), key, { key: 'unplanned', variants: TWO_ARMS }, { control: 10, treatment: 10 }, 'n');
      clock.set(T0 + DAY);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.planning).toEqual({
        days_elapsed: 1,
        daily_units: 20,
        days_remaining: (20_000 - 10) / 10,
        mde_at_current_sample: null,
        expected_days_to_mde: null,
      });
    });
  },
  { clock },
);

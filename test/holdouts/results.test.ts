import { beforeAll, expect, it } from 'vitest';
import { hashBucketV2 } from '../../src/features/assignment/hashing.js';
import {
  DAY,
  HOUR,
  ManualClock,
  createExperiment,
  createMetric,
  expectClose,
  mean,
  sendEvents,
  sum,
  TWO_ARMS,
  type OutgoingEvent,
} from '../analysis/support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { answersFor, heldOut, startedHoldout, unitIds } from './support.js';

const T0 = Date.UTC(2033, 6, 1, 9);
const clock = new ManualClock(T0);

/** The per-unit amounts the test hides from the server until it sends them as events: a launch lifts the units not held out by 10 (about ten standard errors). */
const amountOf = (index: number, held: boolean) => ((index * 37) % 23) + 1 + (held ? 0 : 10);

describeEachDialect(
  'a holdout’s own snapshot',
  (server) => {
    let key: string;
    let environmentId: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap('Holdout results'));
    });

    it('compares the held-out units with an equal-size sample, each counted from its first contact to the holdout’s end', async () => {
      clock.set(T0);
      const spend = await createMetric(server(), key, {
        key: 'spend',
        event_key: 'spend',
        kind: 'revenue',
        aggregation: 'sum',
        property_path: 'amount',
        unit_dedup_window: 'P3D',
      });
      const buyer = await createMetric(server(), key, { key: 'bought', event_key: 'buy', kind: 'binary', unit_dedup_window: 'P3D' });
      const created = await server().request('POST', '/v1/holdouts', {
        key,
        body: { name: 'Q3 holdout', unit_type: 'user', environment_id: environmentId, percent: 20, metric_ids: [spend, buyer] },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({ metric_ids: [spend, buyer], variance_reduction: null });
      const holdout = created.body;
      const unknown = await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key, body: { metric_ids: [spend, '01M8J6FC9MMJWDR86KW78CGHZE'] } });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors).toEqual([{ pointer: '/metric_ids/1', message: 'no such metric in this workspace' }]);
      const p90 = await createMetric(server(), key, { key: 'spend-p90', event_key: 'spend', kind: 'quantile', quantile: 0.9, property_path: 'amount' });
      const quantile = await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key, body: { metric_ids: [p90] } });
      expect(quantile.status).toBe(422);
      expect(quantile.body.errors).toEqual([{ pointer: '/metric_ids/0', message: expect.stringContaining('cannot analyse a quantile metric') }]);
      expect((await server().request('GET', `/v1/holdouts/${holdout.id}`, { key })).body.metric_ids).toEqual([spend, buyer]);
      const draft = await server().request('POST', `/v1/holdouts/${holdout.id}/results/compute`, { key });
      expect(draft.status).toBe(409);
      expect(draft.headers.get('content-type')).toContain('application/problem+json');
      expect((await server().request('POST', `/v1/holdouts/${holdout.id}/start`, { key })).status).toBe(200);
      expect((await server().request('GET', `/v1/holdouts/${holdout.id}/results`, { key })).status).toBe(404);

      clock.advance(10 * 60_000);
      const experiment = await createExperiment(server(), key, { environment_id: environmentId, key: 'checkout-copy', variants: TWO_ARMS });

      // Contacts: a first wave an hour in, a second a day later (the first wave's units seen again then).
      clock.set(T0 + HOUR);
      const first = unitIds('wave-a', 400);
      const answers = await answersFor(server(), key, 'checkout-copy', first);
      // Too early: the metrics count three days after each contact, and the holdout has run an hour.
      const early = await server().request('POST', `/v1/holdouts/${holdout.id}/results/compute`, { key });
      expect(early.status).toBe(422);
      expect(early.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/metric_ids/0', '/metric_ids/1']);
      clock.set(T0 + 30 * HOUR);
      const second = unitIds('wave-b', 200);
      for (const [unit, answer] of await answersFor(server(), key, 'checkout-copy', [...second, ...first.slice(0, 50)])) answers.set(unit, answer);

      clock.set(T0 + 2 * DAY);
      await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'won' } });
      expect((await server().request('POST', `/v1/experiments/${experiment.id}/launch`, { key, body: { variant_key: 'treatment' } })).status).toBe(200);
      clock.set(T0 + 4 * DAY);
      expect((await server().request('POST', `/v1/holdouts/${holdout.id}/end`, { key })).status).toBe(200);

      // The groups, from the holdout's two salts (the server never says who is sampled).
      const salts = await server().ctx.db.selectFrom('holdouts').select(['salt', 'sample_salt']).where('id', '=', holdout.id).executeTakeFirstOrThrow();
      const isHeld = (unit: string) => hashBucketV2(salts.salt, unit) < 2000;
      const isSampled = (unit: string) => !isHeld(unit) && hashBucketV2(salts.sample_salt, unit) < 2500;
      const units = [...first, ...second];
      expect(units.filter(isHeld).sort()).toEqual(heldOut(answers).sort());

      // Each unit: an event before its contact and one past its window (neither counts), two inside;
      // a second-wave unit's last one inside its window but after the holdout ended (it does not count).
      const contactOf = (unit: string) => (unit.startsWith('wave-a') ? T0 + HOUR : T0 + 30 * HOUR);
      const counted = new Map<string, number>();
      const events: OutgoingEvent[] = [];
      units.forEach((unit, index) => {
        const contact = contactOf(unit);
        const amount = amountOf(index, isHeld(unit));
        events.push({ event_key: 'spend', unit_id: unit, occurred_at: contact - 2 * HOUR, properties: { amount: 100 } });
        events.push({ event_key: 'spend', unit_id: unit, occurred_at: contact + HOUR, properties: { amount } });
        events.push({ event_key: 'spend', unit_id: unit, occurred_at: contact + 3 * DAY + HOUR, properties: { amount: 100 } });
        const late = contact + 70 * HOUR;
        events.push({ event_key: 'spend', unit_id: unit, occurred_at: late, properties: { amount: 2 } });
        counted.set(unit, amount + (late < T0 + 4 * DAY ? 2 : 0));
        if (index % 3 === 0 || (!isHeld(unit) && index % 3 === 1)) events.push({ event_key: 'buy', unit_id: unit, occurred_at: contact + 2 * HOUR });
      });
      clock.set(T0 + 4 * DAY + 8 * HOUR);
      await sendEvents(server(), key, events);

      const computed = await server().request('POST', `/v1/holdouts/${holdout.id}/results/compute`, { key });
      expect(computed.status, computed.text).toBe(201);
      const snapshot = computed.body;
      const held = units.filter(isHeld);
      const sampled = units.filter(isSampled);
      expect(snapshot.period).toEqual({ from: new Date(T0).toISOString(), to: new Date(T0 + 4 * DAY).toISOString() });
      expect(snapshot.groups).toEqual([
        { key: 'held_out', units: held.length, expected_share: 0.2 },
        { key: 'sample', units: sampled.length, expected_share: expect.closeTo(0.2, 12) },
      ]);
      // Binomial(600, 0.2) twice: equal in expectation, so the SRM check passes.
      expect(snapshot.srm_warning).toBe(false);

      const [spendResult, boughtResult] = snapshot.metrics;
      const values = (group: string[]) => group.map((unit) => counted.get(unit) as number);
      expect(spendResult.per_group.map((group: { variant_key: string; sample_size: number }) => [group.variant_key, group.sample_size])).toEqual([
        ['held_out', held.length],
        ['sample', sampled.length],
      ]);
      expectClose(spendResult.per_group[0].observed_rate, mean(values(held)), 1e-9, 'held-out mean spend');
      expectClose(spendResult.per_group[1].observed_rate, mean(values(sampled)), 1e-9, 'sample mean spend');
      expect(spendResult.per_group[1].effect).toEqual(spendResult.cumulative_lift);
      expectClose(spendResult.cumulative_lift.absolute.mean, mean(values(sampled)) - mean(values(held)), 1e-9, 'cumulative lift of spend');
      expect(spendResult.cumulative_lift.chance_to_beat_control).toBeGreaterThan(0.99);
      const buyers = (group: string[]) => group.filter((unit) => units.indexOf(unit) % 3 === 0 || (!isHeld(unit) && units.indexOf(unit) % 3 === 1)).length;
      expect(boughtResult.per_group.map((group: { conversions: number }) => group.conversions)).toEqual([buyers(held), buyers(sampled)]);
      expectClose(boughtResult.per_group[0].observed_rate, buyers(held) / held.length, 1e-12, 'held-out purchase rate');
      expect(sum(values(held))).toBeGreaterThan(0);

      expect(snapshot.covered_experiments.map((covered: { id: string }) => covered.id)).toEqual([experiment.id]);
      expect(snapshot.launches).toEqual([
        { experiment_id: experiment.id, experiment_key: 'checkout-copy', variant_key: 'treatment', launched_at: new Date(T0 + 2 * DAY).toISOString() },
      ]);
      expect((await server().request('GET', `/v1/holdouts/${holdout.id}/results`, { key })).body).toEqual(snapshot);
      const audit = await server().request('GET', `/v1/audit?target_id=${holdout.id}&action=holdout.results_computed`, { key });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0].payload).toMatchObject({ snapshot_id: snapshot.id, units: { held_out: held.length, sample: sampled.length } });
    });

    it('classifies contacts under the percentage of the day, counts each from its earliest contact, and adjusts with CUPED over the lookback before it', async () => {
      clock.set(T0);
      const spend = await createMetric(server(), key, {
        key: 'basket',
        event_key: 'basket',
        kind: 'revenue',
        aggregation: 'sum',
        property_path: 'amount',
        unit_dedup_window: 'P2D',
      });
      const holdout = await startedHoldout(server(), key, {
        environment_id: environmentId,
        percent: 10,
        metric_ids: [spend],
        variance_reduction: { method: 'cuped', lookback_days: 1 },
      });
      await createExperiment(server(), key, { environment_id: environmentId, key: 'basket-layout', variants: TWO_ARMS });
      const units = unitIds('shopper', 800);
      clock.set(T0 + HOUR);
      await answersFor(server(), key, 'basket-layout', units);
      // The holdout grows: units of the wider band are held out from then on, and first seen now.
      expect((await server().request('PATCH', `/v1/holdouts/${holdout.id}`, { key, body: { percent: 15 } })).status).toBe(200);
      clock.set(T0 + 3 * DAY);
      await answersFor(server(), key, 'basket-layout', units);

      const salts = await server().ctx.db.selectFrom('holdouts').select(['salt', 'sample_salt']).where('id', '=', holdout.id).executeTakeFirstOrThrow();
      const bucket = (unit: string) => hashBucketV2(salts.salt, unit);
      const sampleBucket = (unit: string) => hashBucketV2(salts.sample_salt, unit);
      // Contacts of the first day: held out or sampled at 10% (1,000 buckets; the sample 1,111 of the rest).
      const earlyContact = (unit: string) => bucket(unit) < 1000 || sampleBucket(unit) < 1111;
      const held = units.filter((unit) => bucket(unit) < 1500);
      const sampled = units.filter((unit) => bucket(unit) >= 1500 && sampleBucket(unit) < 1765);
      const contactOf = (unit: string) => (earlyContact(unit) ? T0 + HOUR : T0 + 3 * DAY);

      const times = [T0 + 2 * HOUR, T0 + 2 * DAY + 12 * HOUR, T0 + 3 * DAY + 5 * HOUR, T0 + 5 * DAY + 6 * HOUR];
      const amount = (index: number, event: number) => ((index * 13 + event * 7) % 17) + (event === 2 ? ((index * 13) % 17) / 2 : 0);
      const events: OutgoingEvent[] = units.flatMap((unit, index) =>
        times.map((at, event) => ({ event_key: 'basket', unit_id: unit, occurred_at: at, properties: { amount: amount(index, event) } })),
      );
      clock.set(T0 + 6 * DAY);
      await sendEvents(server(), key, events);
      const snapshot = (await server().request('POST', `/v1/holdouts/${holdout.id}/results/compute`, { key })).body;

      // Direct: y in [contact, contact + 2 days), x in [contact - 1 day, contact).
      const valuesOf = (unit: string) => {
        const index = units.indexOf(unit);
        const contact = contactOf(unit);
        const inRange = (from: number, to: number) => sum(times.flatMap((at, event) => (at >= from && at < to ? [amount(index, event)] : [])));
        return { y: inRange(contact, contact + 2 * DAY), x: inRange(contact - DAY, contact) };
      };
      const all = [...held, ...sampled].map(valuesOf);
      const meanX = mean(all.map((unit) => unit.x));
      const meanY = mean(all.map((unit) => unit.y));
      const theta = sum(all.map((unit) => (unit.x - meanX) * (unit.y - meanY))) / sum(all.map((unit) => (unit.x - meanX) ** 2));
      expect(snapshot.groups.map((group: { units: number }) => group.units)).toEqual([held.length, sampled.length]);
      const [basket] = snapshot.metrics;
      expect(basket.cuped).toMatchObject({ applied: true, lookback_days: 1 });
      expectClose(basket.cuped.theta, theta, 1e-9, 'theta');
      const groupValues = [held, sampled].map((group) => group.map(valuesOf));
      groupValues.forEach((group, index) => {
        expectClose(basket.per_group[index].observed_rate, mean(group.map((unit) => unit.y)), 1e-9, `unadjusted mean of group ${index}`);
        const adjusted = mean(group.map((unit) => unit.y)) - theta * (mean(group.map((unit) => unit.x)) - meanX);
        expectClose(basket.per_group[index].posterior.mean, adjusted, 1e-9, `adjusted mean of group ${index}`);
      });
    });
  },
  { clock },
);

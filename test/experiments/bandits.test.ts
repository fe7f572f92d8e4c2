import { beforeAll, describe, expect, it } from 'vitest';
import { BANDIT_REWEIGHT_JOB, BANDIT_SCHEDULE_JOB, enqueueDueReweights } from '../../src/features/bandits/jobs.js';
import { sampleRatioMismatch } from '../../src/stats/index.js';
import {
  HOUR,
  MINUTE,
  ManualClock,
  TWO_ARMS,
  assignUnits,
  compute,
  createExperiment,
  createMetric,
  expectClose,
  exposeExactly,
  sendEvents,
  type OutgoingEvent,
} from '../analysis/support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { runQueuedJobs } from '../support/jobs.js';

const T0 = Date.UTC(2032, 2, 1, 9);
const clock = new ManualClock(T0);

/** Conversions for the first `count` units of a list, one hour after the start. */
function conversions(units: readonly string[], count: number): OutgoingEvent[] {
  return units.slice(0, count).map((unit_id) => ({ event_key: 'purchase', unit_id, occurred_at: T0 + HOUR }));
}

describeEachDialect(
  'bandits',
  (server) => {
    let key: string;
    let environmentId: string;
    let metricId: string;
    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap('Bandits'));
      metricId = await createMetric(server(), key, { key: 'purchased', event_key: 'purchase', kind: 'binary' });
    });

    const base = () => ({ environment_id: environmentId, name: 'Bandit', hypothesis: 'the best arm wins traffic', unit_type: 'user', variants: TWO_ARMS });

    describe('allocation settings', () => {
      it('fills the defaults of a bandit and shows fixed by default', async () => {
        clock.set(T0);
        const fixed = await server().request('POST', '/v1/experiments', { key, body: { ...base(), key: 'alloc-fixed' } });
        expect(fixed.status, fixed.text).toBe(201);
        expect(fixed.body).toMatchObject({ allocation: { type: 'fixed' }, allocation_periods: [] });
        const bandit = await server().request('POST', '/v1/experiments', {
          key,
          body: { ...base(), key: 'alloc-bandit', primary_metric_id: metricId, allocation: { type: 'bandit', weight_floor: 0.05 } },
        });
        expect(bandit.status, bandit.text).toBe(201);
        expect(bandit.body.allocation).toEqual({
          type: 'bandit',
          burn_in_hours: 24,
          update_every_minutes: 60,
          min_units_per_variant: 100,
          weight_floor: 0.05,
          stop_at_prob_best: 0.95,
        });
      });

      it('refuses a bandit without a primary metric, an update under 15 minutes, a floor of 1/K or more, an unbounded min_units_per_variant and starting weights under the floor, changing nothing', async () => {
        const cases: Array<[Record<string, unknown>, string]> = [
          [{ allocation: { type: 'bandit' } }, '/primary_metric_id'],
          [{ primary_metric_id: metricId, allocation: { type: 'bandit', update_every_minutes: 10 } }, '/allocation'],
          [{ primary_metric_id: metricId, allocation: { type: 'bandit', weight_floor: 0.5 } }, '/allocation/weight_floor'],
          // A bound no bandit reaches would keep it from ever updating; past 2^53 it would be rounded.
          [{ primary_metric_id: metricId, allocation: { type: 'bandit', min_units_per_variant: 1e308 } }, '/allocation'],
          [{ primary_metric_id: metricId, allocation: { type: 'bandit', min_units_per_variant: 1_000_000_001 } }, '/allocation'],
          // Starting weights below the floor: the bandit would start on a split its rule forbids.
          [
            {
              primary_metric_id: metricId,
              variants: [
                { key: 'control', weight: 100 },
                { key: 'treatment', weight: 0 },
              ],
              allocation: { type: 'bandit', weight_floor: 0.1 },
            },
            '/variants/1/weight',
          ],
        ];
        for (const [fields, pointer] of cases) {
          const response = await server().request('POST', '/v1/experiments', { key, body: { ...base(), key: 'refused', ...fields } });
          expect(response.status, response.text).toBe(422);
          expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
          expect(JSON.stringify(response.body.errors)).toContain(pointer);
        }
        // Only the bandit's own problem, not the fixed allocation's view of every bandit field ("is not a known field").
        const slow = await server().request('POST', '/v1/experiments', {
          key,
          body: { ...base(), key: 'refused', primary_metric_id: metricId, allocation: { type: 'bandit', update_every_minutes: 10 } },
        });
        expect(slow.body.errors).toEqual([{ pointer: '/allocation/update_every_minutes', message: 'must be >= 15' }]);
        // A kind no branch has is named at its discriminator.
        const unknown = await server().request('POST', '/v1/experiments', { key, body: { ...base(), key: 'refused', allocation: { type: 'greedy' } } });
        expect(unknown.status).toBe(422);
        expect(JSON.stringify(unknown.body.errors)).toContain('/allocation/type');
        // 2^53 + 1, written out: a JSON parser would round it to 2^53 silently.
        const unsafe = JSON.stringify({
          ...base(),
          key: 'refused',
          primary_metric_id: metricId,
          allocation: { type: 'bandit', min_units_per_variant: 0 },
        }).replace('"min_units_per_variant":0', '"min_units_per_variant":9007199254740993');
        const rounded = await server().request('POST', '/v1/experiments', { key, rawBody: unsafe, headers: { 'content-type': 'application/json' } });
        expect(rounded.status, rounded.text).toBe(422);
        expect(JSON.stringify(rounded.body.errors)).toContain('/allocation');
        const list = await server().request('GET', '/v1/experiments', { key });
        expect(list.body.data.map((e: { key: string }) => e.key)).not.toContain('refused');
      });

      it('refuses turning a draft whose weights are under the floor into a bandit, naming the weight', async () => {
        const draft = await createExperiment(
          server(),
          key,
          {
            ...base(),
            key: 'alloc-lopsided',
            primary_metric_id: metricId,
            variants: [
              { key: 'control', weight: 95 },
              { key: 'treatment', weight: 5 },
            ],
          },
          false,
        );
        const toBandit = await server().request('PATCH', `/v1/experiments/${draft.id}`, { key, body: { allocation: { type: 'bandit', weight_floor: 0.1 } } });
        expect(toBandit.status, toBandit.text).toBe(422);
        expect(toBandit.body.errors).toEqual([{ pointer: '/variants/1/weight', message: expect.stringContaining('weight_floor (0.1)') }]);
        const unchanged = await server().request('GET', `/v1/experiments/${draft.id}`, { key });
        expect(unchanged.body.allocation).toEqual({ type: 'fixed' });
        const atTheFloor = await server().request('PATCH', `/v1/experiments/${draft.id}`, {
          key,
          body: { allocation: { type: 'bandit', weight_floor: 0.05 } },
        });
        expect(atTheFloor.status, atTheFloor.text).toBe(200);
      });

      it('is editable while draft, not once running; removing the primary metric of a bandit is refused', async () => {
        const draft = await createExperiment(server(), key, { ...base(), key: 'alloc-edit', primary_metric_id: metricId }, false);
        const toBandit = await server().request('PATCH', `/v1/experiments/${draft.id}`, {
          key,
          body: { allocation: { type: 'bandit', burn_in_hours: 2 } },
        });
        expect(toBandit.status, toBandit.text).toBe(200);
        expect(toBandit.body.allocation).toMatchObject({ type: 'bandit', burn_in_hours: 2 });
        const noMetric = await server().request('PATCH', `/v1/experiments/${draft.id}`, { key, body: { primary_metric_id: null } });
        expect(noMetric.status).toBe(422);
        const started = await server().request('POST', `/v1/experiments/${draft.id}/start`, { key });
        expect(started.body.allocation_periods).toEqual([{ started_at: started.body.started_at, weights: { control: 50, treatment: 50 }, seed: null }]);
        const whileRunning = await server().request('PATCH', `/v1/experiments/${draft.id}`, { key, body: { allocation: { type: 'fixed' } } });
        expect(whileRunning.status).toBe(409);
        const byHand = await server().request('PATCH', `/v1/experiments/${draft.id}`, {
          key,
          body: {
            variants: [
              { key: 'control', weight: 10 },
              { key: 'treatment', weight: 90 },
            ],
          },
        });
        expect(byHand.status).toBe(409);
        expect(byHand.body.detail).toMatch(/bandit/);
        await server().request('POST', `/v1/experiments/${draft.id}/stop`, { key, body: { reason: 'business' } });
      });
    });

    it('reweights after the burn-in: new units follow the new weights, old units keep their variants; the analysis stratifies by period, SRM holds under reweighting and flags a broken split', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        ...base(),
        key: 'bandit-flow',
        primary_metric_id: metricId,
        allocation: { type: 'bandit', weight_floor: 0.1 },
      });
      const units = await exposeExactly(server(), key, experiment, { control: 200, treatment: 200 }, 'old');
      clock.set(T0 + 2 * HOUR);
      await sendEvents(server(), key, [...conversions(units.control as string[], 10), ...conversions(units.treatment as string[], 40)]);

      clock.set(T0 + 23 * HOUR);
      expect(await enqueueDueReweights(server().ctx)).toEqual([]);

      clock.set(T0 + 24 * HOUR + MINUTE);
      const due = await enqueueDueReweights(server().ctx);
      expect(due).toHaveLength(1);
      expect(await enqueueDueReweights(server().ctx)).toEqual([]);
      await runQueuedJobs(server());

      const after = (await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body;
      // 5% against 20% on 200 units each: P(best) of the treatment is 1 to many digits, so the
      // weights are the floor and the rest: 10 / 90.
      expect(after.variants.map((v: { key: string; weight: number }) => [v.key, v.weight])).toEqual([
        ['control', 10],
        ['treatment', 90],
      ]);
      expect(after.weights_changed_since_start).toBe(true);
      expect(after.allocation_periods).toHaveLength(2);
      expect(after.allocation_periods[1]).toMatchObject({
        started_at: new Date(T0 + 24 * HOUR + MINUTE).toISOString(),
        weights: { control: 10, treatment: 90 },
      });
      expect(after.allocation_periods[1].seed).toEqual(expect.any(Number));
      const audit = await server().request('GET', `/v1/audit?target_id=${experiment.id}&action=experiment.bandit_reweighted`, { key });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0].payload).toMatchObject({ from: { control: 50, treatment: 50 }, to: { control: 10, treatment: 90 } });
      // The entry reads in words and percentages, the raw draws beside it.
      expect(audit.body.data[0].payload.summary).toMatch(
        /^Weights control 50% → 10%, treatment 50% → 90%; chance of being best: control [<> ]*[\d.]+%, treatment [<> ]*[\d.]+%$/,
      );

      // Old units keep their variants.
      const old = [...(units.control as string[]).slice(0, 50), ...(units.treatment as string[]).slice(0, 50)];
      const again = await assignUnits(server(), key, 'bandit-flow', old);
      expect(again).toEqual([...old.map((_, i) => (i < 50 ? 'control' : 'treatment'))]);

      // New units follow 10 / 90 within sampling error (4 standard deviations).
      const fresh = Array.from({ length: 1000 }, (_, i) => `new-${i}`);
      const variants = await assignUnits(server(), key, 'bandit-flow', fresh);
      const treated = variants.filter((variant) => variant === 'treatment').length;
      expect(Math.abs(treated - 900)).toBeLessThanOrEqual(4 * Math.sqrt(1000 * 0.9 * 0.1));

      // No second update before update_every_minutes has passed since this period began.
      clock.set(T0 + 24 * HOUR + 30 * MINUTE);
      expect(await enqueueDueReweights(server().ctx)).toEqual([]);

      // The analysis stratifies by period: 400 units in period 0 (50/50, 5% vs 20%), the 1000 new
      // ones in period 1 (10/90, no conversions yet). w_0 = 400 / 1400, w_1 = 1000 / 1400.
      const snapshot = await compute(server(), key, experiment.id);
      const newControl = 1000 - treated;
      const stratified = { control: (400 / 1400) * (10 / 200), treatment: (400 / 1400) * (40 / 200) };
      const byKey = Object.fromEntries(snapshot.per_variant.map((v: { variant_key: string }) => [v.variant_key, v]));
      expectClose(byKey.control.posterior.mean, stratified.control, 1e-12, 'control stratified mean');
      expectClose(byKey.treatment.posterior.mean, stratified.treatment, 1e-12, 'treatment stratified mean');
      expect(byKey.control.sample_size).toBe(200 + newControl);
      // The pooled rate would be 10 / (200 + newControl); stratifying does not mix the periods.
      expect(Math.abs(byKey.control.posterior.mean - 10 / (200 + newControl))).toBeGreaterThan(0.01);
      // SRM against Σ_p N_p·w_vp holds; against the current weights alone these units would look broken.
      expect(snapshot.srm_warning).toBe(false);
      expect(snapshot.srm_chi_squared_p).toBeGreaterThan(0.001);
      expect(sampleRatioMismatch([200 + newControl, 200 + treated], [10, 90]).warning).toBe(true);
      expect(snapshot.weights_changed_since_start).toBe(true);
      // Each slice's SRM uses the same period weights: the one source slice holds every unit, so it
      // reads exactly as the overall check, not as a broken split against the current 10 / 90.
      const [source] = snapshot.breakdowns.filter((breakdown: any) => breakdown.dimension === 'source');
      expect(source.values).toHaveLength(1);
      expect(source.values[0]).toMatchObject({ units: 1400, srm_warning: false });
      expect(source.values[0].srm_chi_squared_p).toBeCloseTo(snapshot.srm_chi_squared_p, 12);
      // prob_best of the treatment is far above stop_at_prob_best 0.95: the bandit's rule names it.
      expect(byKey.treatment.prob_best).toBeGreaterThan(0.95);
      expect(snapshot.decision).toMatchObject({ verdict: 'winner', variant_key: 'treatment' });
      expect(snapshot.decision.reason).toMatch(
        /^the bandit's stopping rule: treatment has a (\d+\.\d\d%|over 99\.99%) chance of being best, at least the 95% set to name a winner/,
      );

      // A broken slice still is one: a second key exposes 30 control units and no treatment unit
      // where period 1 expects 10% control; the first key's slice stays sound.
      const logger = await server().request('POST', '/v1/api-keys', { key, body: { name: 'broken logger', kind: 'client' } });
      expect(logger.status, logger.text).toBe(201);
      await exposeExactly(server(), logger.body.key, after, { control: 30, treatment: 0 }, 'sliced');
      const sliced = await compute(server(), key, experiment.id);
      const slices = sliced.breakdowns.find((breakdown: any) => breakdown.dimension === 'source').values;
      expect(slices.map((slice: any) => [slice.label, slice.units, slice.srm_warning])).toEqual([
        [expect.any(String), 1400, false],
        ['broken logger', 30, true],
      ]);

      // A broken split still is one: 300 more control units where period 1 expects 10% of them.
      await exposeExactly(server(), key, after, { control: 300, treatment: 0 }, 'broken');
      const broken = await compute(server(), key, experiment.id);
      expect(broken.srm_warning).toBe(true);
    }, 120_000);

    it('reweights when a snapshot is computed while an update is due, before storing it; the scheduled slot then finds nothing due', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        ...base(),
        key: 'bandit-on-compute',
        primary_metric_id: metricId,
        allocation: { type: 'bandit', burn_in_hours: 1, weight_floor: 0.1 },
      });
      const units = await exposeExactly(server(), key, experiment, { control: 200, treatment: 200 }, 'compute');
      clock.set(T0 + 2 * HOUR);
      await sendEvents(server(), key, [...conversions(units.control as string[], 10), ...conversions(units.treatment as string[], 40)]);

      // Before the burn-in ends, a snapshot changes nothing.
      clock.set(T0 + 30 * MINUTE);
      const early = await compute(server(), key, experiment.id);
      expect(early.traffic.map((variant: any) => variant.weight)).toEqual([50, 50]);

      clock.set(T0 + 2 * HOUR + MINUTE);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.traffic.map((variant: any) => [variant.variant_key, variant.weight])).toEqual([
        ['control', 10],
        ['treatment', 90],
      ]);
      const after = (await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body;
      expect(after.allocation_periods).toHaveLength(2);
      expect(after.allocation_periods[1]).toMatchObject({
        started_at: new Date(T0 + 2 * HOUR + MINUTE).toISOString(),
        weights: { control: 10, treatment: 90 },
      });
      const audit = await server().request('GET', `/v1/audit?target_id=${experiment.id}&action=experiment.bandit_reweighted`, { key });
      expect(audit.body.data).toHaveLength(1);
      expect(await enqueueDueReweights(server().ctx)).toEqual([]);

      // A second snapshot before update_every_minutes has passed does not reweight again.
      clock.set(T0 + 2 * HOUR + 30 * MINUTE);
      await compute(server(), key, experiment.id);
      expect((await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body.allocation_periods).toHaveLength(2);
      await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'business' } });
    }, 60_000);

    it('does not reweight before every variant has min_units_per_variant units', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        ...base(),
        key: 'bandit-few',
        primary_metric_id: metricId,
        allocation: { type: 'bandit', burn_in_hours: 1, min_units_per_variant: 20 },
      });
      const units = await exposeExactly(server(), key, experiment, { control: 20, treatment: 19 }, 'few');
      clock.set(T0 + 2 * HOUR);
      await sendEvents(server(), key, conversions(units.treatment as string[], 15));
      expect(await enqueueDueReweights(server().ctx)).toHaveLength(1);
      await runQueuedJobs(server());
      const after = (await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body;
      expect(after.variants.map((v: { weight: number }) => v.weight)).toEqual([50, 50]);
      expect(after.allocation_periods).toHaveLength(1);
      expect(after.weights_changed_since_start).toBe(false);
      // One more treatment unit and the next slot reweights.
      await exposeExactly(server(), key, experiment, { control: 0, treatment: 1 }, 'more');
      clock.set(T0 + 3 * HOUR);
      expect(await enqueueDueReweights(server().ctx)).toHaveLength(1);
      await runQueuedJobs(server());
      const moved = (await server().request('GET', `/v1/experiments/${experiment.id}`, { key })).body;
      expect(moved.allocation_periods).toHaveLength(2);
      await server().request('POST', `/v1/experiments/${experiment.id}/stop`, { key, body: { reason: 'business' } });
    }, 60_000);

    it('registers the scheduler and the reweight job', () => {
      expect(server().ctx.jobs.names).toContain(BANDIT_REWEIGHT_JOB);
      expect(server().ctx.jobs.recurring).toContainEqual(expect.objectContaining({ name: BANDIT_SCHEDULE_JOB, everyMs: 60_000 }));
    });
  },
  { clock },
);

import normalDist from '@stdlib/stats-base-dists-normal';
import { beforeAll, beforeEach, expect, it } from 'vitest';
import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import { computeById } from '../../src/features/analysis/service.js';
import { aggregateBreakdowns } from '../../src/features/analysis/sql/breakdowns.js';
import { breakdownKeys } from '../../src/features/analysis/passes/breakdowns-pass.js';
import { describeEachStore } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { HOUR, ManualClock, compute, createExperiment, createMetric, expectClose, sendEvents, type OutgoingEvent } from './support.js';

/**
 * Dimension breakdowns (issue #18) through HTTP. Units are assigned with a context; the expected
 * slices are computed here from the plan of every unit (which slice, which variant, how many
 * purchases, which key logged the exposure), independently of the database: units, the count
 * metric's normal posterior and effect from two-pass moments, SRM from the chi-squared formula,
 * and Holm written out again.
 */
const T0 = Date.UTC(2033, 4, 1, 12);
const clock = new ManualClock(T0);
const Z = 1.959963984540054;
const LONG_PLAN = 'p'.repeat(150);

interface Unit {
  id: string;
  variant: string;
  country: string | null;
  plan: string | null;
  purchases: number;
  /** Whether the exposure is logged, and by which key ('a' at assign, 'b' through POST /v1/exposures). */
  exposedBy: 'a' | 'b' | null;
}

const EXPERIMENT = {
  key: 'checkout-slices',
  variants: [
    { key: 'control', weight: 50 },
    { key: 'treatment', weight: 50 },
  ],
};

/** Countries: three large ones, 20 small ones of distinct sizes (the last three fall into (other)), and none. */
function countryOf(i: number): string | null {
  if (i % 10 < 3) return 'de';
  if (i % 10 < 5) return 'fr';
  if (i % 10 < 7) return 'br';
  if (i % 10 === 7) return null;
  return `c${String((i >> 4) % 20).padStart(2, '0')}`;
}

function planUnits(count: number): Unit[] {
  const units: Unit[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = `s-${i}`;
    const variant = chooseVariant(EXPERIMENT.key, id, EXPERIMENT.variants).key;
    const country = countryOf(i);
    // Germany's treatment buys much more: a real effect in one slice.
    const base = i % 3 === 0 ? 1 + (i % 4) : 0;
    const purchases = base + (country === 'de' && variant === 'treatment' ? 2 : 0);
    const plan = i % 7 === 0 ? LONG_PLAN : i % 3 === 0 ? 'pro' : i % 2 === 0 ? 'free' : null;
    // Brazil's exposure log is broken: only one treatment exposure in four arrives (through key b).
    const exposedBy = country !== 'br' ? 'a' : variant === 'control' || i % 4 === 0 ? 'b' : null;
    units.push({ id, variant, country, plan, purchases, exposedBy });
  }
  return units;
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
function moments(values: readonly number[]) {
  const mean = sum(values) / values.length;
  const variance = sum(values.map((value) => (value - mean) ** 2)) / (values.length - 1);
  return { mean, varianceOfMean: variance / values.length };
}

/** Slices of one breakdown as the issue defines them: top 20 by units, then (other), then (none). */
function expectedSlices(exposed: readonly Unit[], valueOf: (unit: Unit) => string | null) {
  const counts = new Map<string, number>();
  for (const unit of exposed) {
    const value = valueOf(unit);
    if (value !== null) counts.set(value, (counts.get(value) ?? 0) + 1);
  }
  const top = [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 20)
    .map(([value]) => value);
  const slices = top.map((value) => ({ value, units: exposed.filter((unit) => valueOf(unit) === value) }));
  const other = exposed.filter((unit) => valueOf(unit) !== null && !top.includes(valueOf(unit) as string));
  const none = exposed.filter((unit) => valueOf(unit) === null);
  return [...slices, { value: '(other)', units: other }, { value: '(none)', units: none }].filter((slice) => slice.units.length > 0);
}

function chiSquaredP(control: number, treatment: number): number {
  const expected = (control + treatment) / 2;
  const chi2 = ((control - expected) ** 2 + (treatment - expected) ** 2) / expected;
  return 2 * (1 - normalDist.cdf(Math.sqrt(chi2), 0, 1)); // chi-squared with 1 df
}

function holm(pValues: number[]): boolean[] {
  const order = pValues.map((p, index) => ({ p, index })).sort((a, b) => a.p - b.p);
  const rejected = pValues.map(() => false);
  for (let k = 0; k < order.length && (order[k] as { p: number }).p <= 0.05 / (order.length - k); k += 1)
    rejected[(order[k] as { index: number }).index] = true;
  return rejected;
}

/** Checks one slice against the units it should hold; returns its chance to beat control. */
function expectSlice(actual: any, units: readonly Unit[], what: string): number {
  const control = units.filter((unit) => unit.variant === 'control').map((unit) => unit.purchases);
  const treatment = units.filter((unit) => unit.variant === 'treatment').map((unit) => unit.purchases);
  expect(actual.units, what).toBe(units.length);
  expect(
    actual.per_variant.map((variant: any) => variant.sample_size),
    what,
  ).toEqual([control.length, treatment.length]);
  expectClose(actual.srm_chi_squared_p, chiSquaredP(control.length, treatment.length), 1e-9, `${what} srm`);
  expect(actual.srm_warning, what).toBe(chiSquaredP(control.length, treatment.length) < 0.001);
  const [c, t] = [moments(control), moments(treatment)];
  expectClose(actual.per_variant[0].posterior.mean, c.mean, 1e-9, `${what} control mean`);
  expectClose(actual.per_variant[1].posterior.credible_interval_95[1], t.mean + Z * Math.sqrt(t.varianceOfMean), 1e-9, `${what} treatment ci`);
  const sd = Math.sqrt(c.varianceOfMean + t.varianceOfMean);
  const effect = actual.per_variant[1].effect;
  expectClose(effect.absolute.credible_interval_95[0], t.mean - c.mean - Z * sd, 1e-9, `${what} absolute[0]`);
  const chance = normalDist.cdf((t.mean - c.mean) / sd, 0, 1);
  expectClose(effect.chance_to_beat_control, chance, 1e-7, `${what} chance`);
  return chance;
}

/** The shared scenario, and the answers its set-up got (the test on storing contexts checks them). */
interface Breakdowns {
  key: string;
  keyIds: { a: string; b: string };
  experiment: any;
  units: Unit[];
  /** [planned, answered] variant of every assignment. */
  assigned: Array<[string, unknown]>;
  patchStatus: number;
  patchText: string;
  /** Status and text of every exposure logged through key b. */
  logged: Array<[number, string]>;
}

/**
 * Assigns 1200 units with their context (the plan dimension is added while running: units assigned
 * before it have no plan value), logs the exposures of key b and sends the purchases; leaves the
 * clock at T0 + 6 h.
 */
async function setUpBreakdowns(server: TestServer): Promise<Breakdowns> {
  clock.set(T0);
  const boot = await server.bootstrap('Breakdowns');
  const key = boot.key;
  const created = await server.request('POST', '/v1/api-keys', { key, body: { name: 'exposure logger', kind: 'client' } });
  const keyB: string = created.body.key;
  const metric = await createMetric(server, key, { key: 'purchases', event_key: 'buy', kind: 'count' });
  const experiment = await createExperiment(server, key, {
    environment_id: boot.environmentId,
    ...EXPERIMENT,
    primary_metric_id: metric,
    dimensions: ['country'],
  });
  const units = planUnits(1200);
  const assigned: Array<[string, unknown]> = [];
  const assign = async (batch: Unit[]) => {
    for (let start = 0; start < batch.length; start += 100) {
      const round = batch.slice(start, start + 100);
      const answers = await Promise.all(
        round.map((unit) => {
          const context = { ...(unit.country === null ? {} : { country: unit.country }), ...(unit.plan === null ? {} : { plan: unit.plan }) };
          return server.request('POST', '/v1/assign', {
            key,
            body: { experiment_key: EXPERIMENT.key, unit_id: unit.id, context, log_exposure: unit.exposedBy === 'a' },
          });
        }),
      );
      answers.forEach((answer, index) => assigned.push([round[index]?.variant as string, answer.body.variant]));
    }
  };
  const early = units.slice(0, 300);
  await assign(early);
  const patched = await server.request('PATCH', `/v1/experiments/${experiment.id}`, { key, body: { dimensions: ['country', 'plan'] } });
  for (const unit of early) unit.plan = null;
  await assign(units.slice(300));
  // A later assignment with another context changes nothing.
  await server.request('POST', '/v1/assign', { key, body: { experiment_key: EXPERIMENT.key, unit_id: 's-1', context: { country: 'zz' } } });
  const logged: Array<[number, string]> = [];
  for (const unit of units.filter((candidate) => candidate.exposedBy === 'b')) {
    const response = await server.request('POST', '/v1/exposures', {
      key: keyB,
      body: { experiment_key: EXPERIMENT.key, unit_id: unit.id, variant: unit.variant },
    });
    logged.push([response.status, response.text]);
  }
  const events: OutgoingEvent[] = units.flatMap((unit) =>
    Array.from({ length: unit.purchases }, (_, j) => ({ event_key: 'buy', unit_id: unit.id, occurred_at: T0 + (j + 1) * HOUR })),
  );
  clock.set(T0 + 6 * HOUR);
  await sendEvents(server, key, events);
  return { key, keyIds: { a: boot.keyId, b: created.body.id }, experiment, units, assigned, patchStatus: patched.status, patchText: patched.text, logged };
}

describeEachStore(
  'dimension breakdowns through HTTP',
  (server) => {
    // A read-only fixture, set up once: no test changes its experiment, units or events.
    let key: string;
    let keyIds: { a: string; b: string };
    let experiment: any;
    let units: Unit[];
    let fixture: Breakdowns;
    beforeAll(async () => {
      fixture = await setUpBreakdowns(server());
      ({ key, keyIds, experiment, units } = fixture);
    });
    beforeEach(() => clock.set(T0 + 6 * HOUR));

    it('refuses dimensions that break the rules, with a 422 naming them, and changes nothing', async () => {
      const boot = await server().bootstrap('Breakdowns, refused');
      const metric = await createMetric(server(), boot.key, { key: 'purchases', event_key: 'buy', kind: 'count' });
      const body = { environment_id: boot.environmentId, ...EXPERIMENT, primary_metric_id: metric };
      for (const [dimensions, pointer] of [
        [['a', 'b', 'c', 'd', 'e', 'f'], '/dimensions'],
        [['x'.repeat(65)], '/dimensions/0'],
        [['source'], '/dimensions/0'],
      ] as const) {
        const refused = await server().request('POST', '/v1/experiments', {
          key: boot.key,
          body: { name: 'x', hypothesis: 'y', unit_type: 'user', ...body, dimensions },
        });
        expect(refused.status, refused.text).toBe(422);
        expect(refused.text).toContain(pointer);
      }
      const accepted = await createExperiment(server(), boot.key, { ...body, dimensions: ['country'] });
      expect(accepted.dimensions).toEqual(['country']);
    });

    it('stores the context values of first assignments and the key that logged each exposure', () => {
      // The assignments, the PATCH adding the plan dimension and the exposures of key b are made
      // by the set-up; the snapshot tests below read what they stored.
      for (const [planned, answered] of fixture.assigned) expect(answered).toBe(planned);
      expect(fixture.assigned).toHaveLength(1200);
      expect(fixture.patchStatus, fixture.patchText).toBe(200);
      for (const [status, text] of fixture.logged) expect(status, text).toBe(202);
    });

    it('reports every slice as an independent computation finds it, with SRM where the log broke and Holm’s correction', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      const exposed = units.filter((unit) => unit.exposedBy !== null);
      const truncated = (value: string | null) => (value === null ? null : value.slice(0, 128));
      const source = (unit: Unit) => (unit.exposedBy === 'a' ? keyIds.a : keyIds.b);
      const expected = [
        { dimension: 'country', slices: expectedSlices(exposed, (unit) => unit.country) },
        { dimension: 'plan', slices: expectedSlices(exposed, (unit) => truncated(unit.plan)) },
        { dimension: 'source', slices: expectedSlices(exposed, source) },
      ];
      expect(snapshot.breakdowns.map((breakdown: any) => breakdown.dimension)).toEqual(['country', 'plan', 'source']);
      const chances: number[] = [];
      expected.forEach(({ dimension, slices }, d) => {
        const actual = snapshot.breakdowns[d];
        expect(
          actual.values.map((value: any) => value.value),
          dimension,
        ).toEqual(slices.map((slice) => slice.value));
        slices.forEach((slice, s) => chances.push(expectSlice(actual.values[s], slice.units, `${dimension}=${slice.value}`)));
      });
      expect(snapshot.breakdowns[0].values).toHaveLength(22);
      expect(snapshot.breakdowns[1].values.map((value: any) => value.value)).toContain('p'.repeat(128));
      // Only Brazil (and the key that logged its exposures) fails its SRM among countries and sources.
      expect(snapshot.breakdowns[0].values.filter((value: any) => value.srm_warning).map((value: any) => value.value)).toEqual(['br']);
      expect(snapshot.breakdowns[2].values.filter((value: any) => value.srm_warning).map((value: any) => value.value)).toEqual([keyIds.b]);
      // Names beside ids: a source slice's label is its API key's name; other values label themselves.
      const labels = Object.fromEntries(snapshot.breakdowns[2].values.map((value: any) => [value.value, value.label]));
      expect(labels).toMatchObject({ [keyIds.a]: 'Bootstrap server key', [keyIds.b]: 'exposure logger' });
      expect(snapshot.breakdowns[0].values.every((value: any) => value.label === value.value)).toBe(true);
      const significant = holm(chances.map((c) => 2 * Math.min(c, 1 - c)));
      const flags = snapshot.breakdowns.flatMap((breakdown: any) => breakdown.values.map((value: any) => value.significant_after_correction));
      expect(flags).toEqual(significant);
      expect(snapshot.breakdowns[0].values.find((value: any) => value.value === 'de').significant_after_correction).toBe(true);
    });

    it('gives the same breakdowns when the units are cut into chunks, and reads them back from GET results', async () => {
      const whole = await compute(server(), key, experiment.id);
      for (const chunkUnits of [50, 333]) {
        const chunked = (await computeById(server().ctx, experiment.id, { trigger: 'cli', chunkUnits })) as any;
        expect(JSON.stringify(chunked.breakdowns)).toBe(JSON.stringify(whole.breakdowns));
      }
      const read = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key });
      expect(read.status).toBe(200);
      expect(read.body.breakdowns).toHaveLength(3);
    });

    it('reads dimensions whose names hold dots and quotes', async () => {
      const odd = 'app.ver"sion';
      const boot = await server().bootstrap('Breakdowns, odd names');
      const other = await createExperiment(server(), boot.key, {
        environment_id: boot.environmentId,
        key: 'odd-names',
        variants: EXPERIMENT.variants,
        dimensions: [odd],
      });
      for (let i = 0; i < 12; i += 1) {
        const answer = await server().request('POST', '/v1/assign', {
          key: boot.key,
          body: { experiment_key: 'odd-names', unit_id: `o-${i}`, context: { [odd]: i % 3 === 0 ? '2.0' : '1.9', app: { 'ver"sion': 'nested' } } },
        });
        expect(answer.status).toBe(200);
      }
      const snapshot = await compute(server(), boot.key, other.id);
      expect(snapshot.breakdowns[0].dimension).toBe(odd);
      expect(snapshot.breakdowns[0].values.map((value: any) => [value.value, value.units])).toEqual([
        ['1.9', 8],
        ['2.0', 4],
      ]);
    });

    it('finds the same slices with the two-phase pass (used when values are many) as with the direct one', async () => {
      const ctx = server().ctx;
      const input = {
        workspaceId: experiment.workspace_id,
        experimentId: experiment.id,
        breakdowns: breakdownKeys(['country', 'plan']),
        primary: null,
        eventsBefore: null,
      };
      const shape = (totals: Awaited<ReturnType<typeof aggregateBreakdowns>>) =>
        totals.map((breakdown) => ({
          values: breakdown.values,
          buckets: [...breakdown.buckets]
            .sort((a, b) => a[0] - b[0])
            .map(([bucket, variants]) => [bucket, [...variants.values()].map((v) => [v.variant_key, v.units]).sort()]),
        }));
      for (const chunkUnits of [null, 97]) {
        const direct = await aggregateBreakdowns(ctx.db, ctx.seam, ctx.reads, { ...input, chunkUnits });
        const twoPhase = await aggregateBreakdowns(ctx.db, ctx.seam, ctx.reads, { ...input, chunkUnits }, { twoPhase: true });
        expect(shape(twoPhase)).toEqual(shape(direct));
        expect(direct[0]?.values).toHaveLength(20);
      }
    });
  },
  { clock },
);

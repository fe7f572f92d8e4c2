import normalDist from '@stdlib/stats-base-dists-normal';
import { beforeAll, expect, it } from 'vitest';
import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import { describeEachStore } from '../support/each-dialect.js';
import { HOUR, ManualClock, compute, createExperiment, createMetric, expectClose, sendEvents, type OutgoingEvent } from './support.js';

/**
 * Breakdowns of guardrails and secondary metrics (issue #52) through HTTP. Every unit's plan
 * (variant, country, purchases, errors, views) is known here; the expected slices of each metric
 * are computed from it with two-pass moments, the normal posterior and effect written out again,
 * and Holm over that metric's own slices only (each metric is its own family).
 */
const T0 = Date.UTC(2034, 2, 1, 12);
const clock = new ManualClock(T0);
const Z = 1.959963984540054;
const KEY = 'guardrail-slices';
const VARIANTS = [
  { key: 'control', weight: 50 },
  { key: 'treatment', weight: 50 },
];

interface Unit {
  id: string;
  variant: string;
  country: string | null;
  purchases: number;
  errors: number;
  views: number;
}

function planUnits(count: number): Unit[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `g-${i}`;
    const variant = chooseVariant(KEY, id, VARIANTS).key;
    const country = i % 10 < 4 ? 'fr' : i % 10 < 7 ? 'de' : null;
    const purchases = i % 3 === 0 ? 1 + (i % 2) : 0;
    // The treatment breaks something in France only: errors there, nowhere else.
    const errors = (i % 4 === 0 ? 1 : 0) + (country === 'fr' && variant === 'treatment' ? 2 + (i % 3) : 0);
    const views = 1 + (i % 5) + (i % 7 === 0 ? 3 : 0);
    return { id, variant, country, purchases, errors, views };
  });
}

const total = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0);
function moments(values: readonly number[]) {
  const mean = total(values) / values.length;
  const variance = total(values.map((value) => (value - mean) ** 2)) / (values.length - 1);
  return { mean, varianceOfMean: variance / values.length };
}

function holm(pValues: number[]): boolean[] {
  const order = pValues.map((p, index) => ({ p, index })).sort((a, b) => a.p - b.p);
  const rejected = pValues.map(() => false);
  for (let k = 0; k < order.length && (order[k] as { p: number }).p <= 0.05 / (order.length - k); k += 1)
    rejected[(order[k] as { index: number }).index] = true;
  return rejected;
}

/** The country slices as breakdowns order them (France has the most units), then (none); then source, one key: every unit. */
function slicesOf(units: readonly Unit[]): Array<{ dimension: string; value: string | null; units: Unit[] }> {
  return [
    ...['fr', 'de'].map((value) => ({ dimension: 'country', value, units: units.filter((unit) => unit.country === value) })),
    { dimension: 'country', value: '(none)', units: units.filter((unit) => unit.country === null) },
    { dimension: 'source', value: null, units: [...units] },
  ];
}

/** Checks one slice of a count metric against its units; returns the two-sided tail 2·min(c, 1 − c) of its effect. */
function expectSlice(actual: any, units: readonly Unit[], valueOf: (unit: Unit) => number, what: string): number {
  const control = units.filter((unit) => unit.variant === 'control').map(valueOf);
  const treatment = units.filter((unit) => unit.variant === 'treatment').map(valueOf);
  expect(actual.units, what).toBe(units.length);
  expect(
    actual.per_variant.map((variant: any) => variant.sample_size),
    what,
  ).toEqual([control.length, treatment.length]);
  const [c, t] = [moments(control), moments(treatment)];
  expectClose(actual.per_variant[0].posterior.mean, c.mean, 1e-9, `${what} control mean`);
  expectClose(actual.per_variant[1].posterior.mean, t.mean, 1e-9, `${what} treatment mean`);
  const sd = Math.sqrt(c.varianceOfMean + t.varianceOfMean);
  const effect = actual.per_variant[1].effect;
  expectClose(effect.absolute.credible_interval_95[0], t.mean - c.mean - Z * sd, 1e-9, `${what} absolute[0]`);
  expectClose(effect.absolute.credible_interval_95[1], t.mean - c.mean + Z * sd, 1e-9, `${what} absolute[1]`);
  // The chance is the better direction's; its two-sided tail is the same either way.
  const chance = normalDist.cdf((t.mean - c.mean) / sd, 0, 1);
  const tail = 2 * Math.min(chance, 1 - chance);
  expectClose(2 * Math.min(effect.chance_to_beat_control, 1 - effect.chance_to_beat_control), tail, 1e-7, `${what} tail`);
  return tail;
}

function expectMetric(entry: any, units: readonly Unit[], valueOf: (unit: Unit) => number, what: string): void {
  expect(entry.breakdowns.map((breakdown: any) => breakdown.dimension)).toEqual(['country', 'source']);
  expect(entry.breakdowns[0].values.map((slice: any) => slice.value)).toEqual(['fr', 'de', '(none)']);
  expect(entry.breakdowns[1].values).toHaveLength(1);
  const expected = slicesOf(units);
  const actual = entry.breakdowns.flatMap((breakdown: any) => breakdown.values);
  const tails = expected.map((slice, i) => expectSlice(actual[i], slice.units, valueOf, `${what} ${slice.dimension}=${slice.value ?? 'the key'}`));
  expect(
    actual.map((slice: any) => slice.significant_after_correction),
    `${what}: Holm over its own slices`,
  ).toEqual(holm(tails));
}

describeEachStore(
  'breakdowns of guardrails and secondary metrics through HTTP',
  (server) => {
    let key: string;
    let experiment: any;
    let units: Unit[];
    beforeAll(async () => {
      clock.set(T0);
      const boot = await server().bootstrap('Guardrail breakdowns');
      key = boot.key;
      const purchases = await createMetric(server(), key, { key: 'purchases', name: 'Purchases', event_key: 'buy', kind: 'count' });
      const errors = await createMetric(server(), key, { key: 'errors', name: 'Checkout errors', event_key: 'error', kind: 'count', higher_is_better: false });
      const views = await createMetric(server(), key, { key: 'views', name: 'Page views', event_key: 'view', kind: 'count' });
      experiment = await createExperiment(server(), key, {
        environment_id: boot.environmentId,
        key: KEY,
        variants: VARIANTS,
        primary_metric_id: purchases,
        guardrail_metric_ids: [errors],
        secondary_metric_ids: [views],
        dimensions: ['country'],
      });
      units = planUnits(900);
      for (let start = 0; start < units.length; start += 100) {
        const answers = await Promise.all(
          units.slice(start, start + 100).map((unit) =>
            server().request('POST', '/v1/assign', {
              key,
              body: { experiment_key: KEY, unit_id: unit.id, context: unit.country === null ? {} : { country: unit.country }, log_exposure: true },
            }),
          ),
        );
        answers.forEach((answer, i) => expect(answer.body.variant).toBe(units[start + i]?.variant));
      }
      const events: OutgoingEvent[] = units.flatMap((unit) =>
        (
          [
            ['buy', unit.purchases],
            ['error', unit.errors],
            ['view', unit.views],
          ] as const
        ).flatMap(([eventKey, count]) =>
          Array.from({ length: count }, (_, j) => ({ event_key: eventKey, unit_id: unit.id, occurred_at: T0 + (j + 1) * HOUR })),
        ),
      );
      clock.set(T0 + 8 * HOUR);
      await sendEvents(server(), key, events);
    });

    it('breaks each guardrail and secondary metric down as an independent computation does, each its own Holm family', async () => {
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.metric_breakdowns.map((entry: any) => [entry.metric_key, entry.metric_name, entry.role])).toEqual([
        ['errors', 'Checkout errors', 'guardrail'],
        ['views', 'Page views', 'secondary'],
      ]);
      expectMetric(snapshot.metric_breakdowns[0], units, (unit) => unit.errors, 'errors');
      expectMetric(snapshot.metric_breakdowns[1], units, (unit) => unit.views, 'views');
      // The guardrail's harm shows in France.
      const france = snapshot.metric_breakdowns[0].breakdowns[0].values[0];
      expect([france.value, france.significant_after_correction]).toEqual(['fr', true]);
      // The primary metric's breakdowns keep their own family and shape.
      expectMetric({ breakdowns: snapshot.breakdowns }, units, (unit) => unit.purchases, 'purchases');
    });

    it('gives the same metric breakdowns from raw events as from the rollups, and reads them back from GET results', async () => {
      const incremental = await compute(server(), key, experiment.id, 'incremental');
      const full = await compute(server(), key, experiment.id, 'full');
      expect(JSON.stringify(full.metric_breakdowns)).toBe(JSON.stringify(incremental.metric_breakdowns));
      const read = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key });
      expect(read.status).toBe(200);
      expect(read.body.metric_breakdowns).toEqual(full.metric_breakdowns);
    });
  },
  { clock },
);

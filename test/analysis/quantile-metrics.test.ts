import { beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../support/each-dialect.js';
import { DAY, HOUR, ManualClock, compute, createExperiment, createMetric, expectClose, exposeExactly, sendEvents, type OutgoingEvent } from './support.js';

/**
 * Quantile metrics through HTTP (docs/metrics.md "Quantile metrics", docs/statistics.md "Quantile
 * metrics"): validation naming the field, and snapshots whose per-variant `quantile` is the
 * quantile of the hidden data, recomputed here from the plan of events (numpy's type 7, the
 * delta-method σ over units at the event level, the binomial one at the unit level), in both modes.
 */
const T0 = Date.UTC(2034, 2, 3, 9);
const clock = new ManualClock(T0);
const UNITS = 40;
const Z = 1.959963984540054;

type Variant = 'control' | 'treatment';

/** Unit i's page loads (ms) inside its window: 1 to 4 of them; the treatment is slower on every third unit. */
function loads(variant: Variant, i: number): number[] {
  return Array.from({ length: 1 + (i % 4) }, (_, j) => 200 + 10 * ((i * 7 + j * 3) % 13) + j + (variant === 'treatment' && i % 3 === 0 ? 40 : 0));
}

function eventsOf(units: Record<Variant, string[]>): OutgoingEvent[] {
  const events: OutgoingEvent[] = [];
  for (const variant of ['control', 'treatment'] as const) {
    units[variant].forEach((unit_id, i) => {
      loads(variant, i).forEach((ms, j) => events.push({ event_key: 'page_load', unit_id, occurred_at: T0 + HOUR + j * 1000, properties: { ms } }));
      // Not counted: before the exposure, after the one-day window, without a number, another key.
      events.push({ event_key: 'page_load', unit_id, occurred_at: T0 - HOUR, properties: { ms: 9_000 } });
      events.push({ event_key: 'page_load', unit_id, occurred_at: T0 + 2 * DAY, properties: { ms: 9_000 } });
      events.push({ event_key: 'page_load', unit_id, occurred_at: T0 + HOUR, properties: { ms: 'slow' } });
      events.push({ event_key: 'click', unit_id, occurred_at: T0 + HOUR, properties: { ms: 9_000 } });
    });
  }
  return events;
}

function type7(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const low = Math.floor(h);
  return (sorted[low] as number) + (h - low) * ((sorted[Math.min(low + 1, sorted.length - 1)] as number) - (sorted[low] as number));
}

/** The expected quantile, interval and standard error of one arm: per unit its values (event level) or one value each (unit level). */
function expected(perUnit: number[][], q: number, level: 'event' | 'unit') {
  const values = perUnit.flat();
  const value = type7(values, q);
  let sigma: number;
  if (level === 'unit') sigma = Math.sqrt((q * (1 - q)) / values.length);
  else {
    const n = perUnit.map((unit) => unit.length);
    const s = perUnit.map((unit) => unit.filter((x) => x <= value).length);
    const k = perUnit.length;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const cov = (xs: number[], ys: number[]) => xs.reduce((acc, x, i) => acc + (x - mean(xs)) * ((ys[i] as number) - mean(ys)), 0) / (k - 1);
    const r = s.reduce((a, b) => a + b, 0) / n.reduce((a, b) => a + b, 0);
    sigma = Math.sqrt((cov(s, s) - 2 * r * cov(s, n) + r * r * cov(n, n)) / (k * mean(n) ** 2));
  }
  const lower = type7(values, q - Z * sigma);
  const upper = type7(values, q + Z * sigma);
  return { value, values: values.length, units: perUnit.length, lower, upper, se: (upper - lower) / (2 * Z) };
}

const entryOf = (perVariant: any[], variant: Variant) => perVariant.find((item: any) => item.variant_key === variant);

describeEachStore(
  'quantile metrics through HTTP',
  (server) => {
    let key: string;
    let environmentId: string;
    const metrics: Record<string, string> = {};

    beforeAll(async () => {
      clock.set(T0);
      ({ key, environmentId } = await server().bootstrap('Quantiles'));
      const load = { event_key: 'page_load', property_path: 'ms', unit_dedup_window: 'P1D', unit: 'ms', higher_is_better: false };
      metrics.p90 = await createMetric(server(), key, { key: 'load_p90', kind: 'quantile', quantile: 0.9, ...load });
      metrics.median = await createMetric(server(), key, {
        key: 'unit_load_median',
        kind: 'quantile',
        quantile: 0.5,
        quantile_level: 'unit',
        aggregation: 'mean',
        capping: { type: 'absolute', value: 250 },
        ...load,
      });
    });

    it('creates quantile metrics with their defaults and refuses bad ones naming the field', async () => {
      const created = await server().request('GET', `/v1/metrics/${metrics.p90}`, { key });
      expect(created.body).toMatchObject({ kind: 'quantile', quantile: 0.9, quantile_level: 'event', aggregation: 'sum', property_path: 'ms' });
      const base = { key: 'bad_quantile', name: 'Bad', event_key: 'page_load', kind: 'quantile', property_path: 'ms', quantile: 0.9 };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ quantile: undefined }, '/quantile'],
        [{ quantile: 1 }, '/quantile'],
        [{ quantile: 0 }, '/quantile'],
        [{ quantile: -0.5 }, '/quantile'],
        [{ property_path: undefined }, '/property_path'],
        [{ aggregation: 'count', property_path: undefined }, '/aggregation'],
        [{ quantile_level: 'session' }, '/quantile_level'],
        [{ event_key: undefined }, '/event_key'],
        [{ kind: 'count', property_path: undefined }, '/quantile'],
        [{ kind: 'revenue', aggregation: 'sum', quantile: undefined, quantile_level: 'unit' }, '/quantile_level'],
      ];
      for (const [fields, pointer] of cases) {
        const body = Object.fromEntries(Object.entries({ ...base, ...fields }).filter(([, value]) => value !== undefined));
        const rejected = await server().request('POST', '/v1/metrics', { key, body });
        expect(rejected.status, `${JSON.stringify(fields)}: ${rejected.text}`).toBe(422);
        expect(rejected.headers.get('content-type')).toContain('application/problem+json');
        expect(rejected.body.errors.map((error: any) => error.pointer)).toContain(pointer);
      }
      const list = await server().request('GET', '/v1/metrics?limit=100', { key });
      expect(list.body.data.map((metric: any) => metric.key)).not.toContain('bad_quantile');
      // Edits keep the quantile; the quantile itself cannot change.
      const renamed = await server().request('PATCH', `/v1/metrics/${metrics.p90}`, { key, body: { name: 'Load time p90' } });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.body).toMatchObject({ name: 'Load time p90', quantile: 0.9, quantile_level: 'event' });
      const moved = await server().request('PATCH', `/v1/metrics/${metrics.p90}`, { key, body: { quantile: 0.5 } });
      expect(moved.status, moved.text).toBe(422);
      expect(moved.body.errors.map((error: any) => error.pointer)).toContain('/quantile');
    });

    it('reports each variant’s quantile of the counted values with its interval and the relative effect, the same in both modes', async () => {
      clock.set(T0);
      const experiment = await createExperiment(server(), key, {
        environment_id: environmentId,
        key: 'quantiles',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: metrics.p90,
        guardrail_metric_ids: [metrics.median],
      });
      const units = (await exposeExactly(server(), key, experiment, { control: UNITS, treatment: UNITS }, 'q')) as Record<Variant, string[]>;
      clock.set(T0 + 3 * DAY);
      await sendEvents(server(), key, eventsOf(units));
      const incremental = await compute(server(), key, experiment.id, 'incremental');
      const full = await compute(server(), key, experiment.id, 'full');
      for (const snapshot of [incremental, full]) {
        expect(snapshot.primary_metric).toMatchObject({ kind: 'quantile', quantile: 0.9, quantile_level: 'event', cap_applied: null });
        const arms = {} as Record<Variant, ReturnType<typeof expected>>;
        for (const variant of ['control', 'treatment'] as const) {
          const perUnit = Array.from({ length: UNITS }, (_, i) => loads(variant, i));
          const want = expected(perUnit, 0.9, 'event');
          arms[variant] = want;
          const entry = entryOf(snapshot.per_variant, variant);
          expect(entry.quantile).toMatchObject({ q: 0.9, level: 'event', values: want.values, units: UNITS });
          expectClose(entry.quantile.value, want.value, 1e-9, `${variant} p90`);
          expectClose(entry.quantile.interval_95[0], want.lower, 1e-9, `${variant} lower`);
          expectClose(entry.quantile.interval_95[1], want.upper, 1e-9, `${variant} upper`);
          expectClose(entry.quantile.standard_error, want.se, 1e-9, `${variant} standard error`);
          expectClose(entry.observed_rate, want.value, 1e-9, `${variant} observed`);
          expect(entry.sample_size).toBe(UNITS);
        }
        // The relative difference of the quantiles, its delta-method interval, and the direction (lower is better).
        const effect = entryOf(snapshot.per_variant, 'treatment').effect;
        const { control: c, treatment: t } = arms;
        const relative = t.value / c.value - 1;
        const half = Z * Math.sqrt(t.se ** 2 / c.value ** 2 + (c.se ** 2 * t.value ** 2) / c.value ** 4);
        expectClose(effect.relative.mean, relative, 1e-9, 'relative effect');
        expectClose(effect.relative.credible_interval_95[0], relative - half, 1e-9, 'relative lower');
        expectClose(effect.relative.credible_interval_95[1], relative + half, 1e-9, 'relative upper');
        expect(relative).toBeGreaterThan(0);
        expect(effect.chance_to_beat_control).toBeLessThan(0.5);

        // The unit-level guardrail: each unit's mean load, capped at 250 ms, its median.
        const guardrail = snapshot.guardrails[0];
        expect(guardrail).toMatchObject({ metric_key: 'unit_load_median', cap_applied: 250 });
        for (const variant of ['control', 'treatment'] as const) {
          const means = Array.from({ length: UNITS }, (_, i) => {
            const own = loads(variant, i);
            return [Math.min(250, own.reduce((a, b) => a + b, 0) / own.length)];
          });
          const want = expected(means, 0.5, 'unit');
          const entry = entryOf(guardrail.per_variant, variant);
          expect(entry.quantile).toMatchObject({ q: 0.5, level: 'unit', values: UNITS, units: UNITS });
          expectClose(entry.quantile.value, want.value, 1e-9, `${variant} unit median`);
          expectClose(entry.quantile.standard_error, want.se, 1e-9, `${variant} unit standard error`);
        }
      }
      expect(full.computation.mode).toBe('full');
      expect(incremental.computation.mode).toBe('incremental');
      expect(incremental.computation.events_read).toBeGreaterThan(0);
    });
  },
  { clock },
);

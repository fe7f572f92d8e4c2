import { beforeAll, expect, it } from 'vitest';
import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import { HOUR, ManualClock, compute, createExperiment, createMetric, sendEvents, type OutgoingEvent } from '../analysis/support.js';
import { describeEachDialect } from '../support/each-dialect.js';
import { parseCsv, runNotebook } from './export-support.js';

/**
 * The exports carry every breakdown of a snapshot (issues #52 and #59): the primary metric's, and
 * each guardrail's and secondary metric's (`metric_breakdowns`). Through HTTP, each CSV row of a
 * slice is matched to the snapshot's number for that metric, dimension, value and variant; the
 * notebook's script recomputes the slices with SciPy.
 */
const T0 = Date.UTC(2034, 4, 1, 12);
const clock = new ManualClock(T0);
const KEY = 'export-slices';
const VARIANTS = [
  { key: 'control', weight: 50 },
  { key: 'treatment', weight: 50 },
];

interface Unit {
  id: string;
  country: string | null;
  events: Array<[string, number]>;
}

function planUnits(count: number): Unit[] {
  return Array.from({ length: count }, (_, i) => {
    const id = `x-${i}`;
    const treated = chooseVariant(KEY, id, VARIANTS).key === 'treatment';
    const country = i % 10 < 5 ? 'fr' : i % 10 < 8 ? 'de' : null;
    const errors = (i % 4 === 0 ? 1 : 0) + (treated && country === 'fr' ? 1 + (i % 3) : 0);
    return {
      id,
      country,
      events: [
        ['buy', i % 3 === 0 ? 1 + (i % 2) : 0],
        ['error', errors],
        ['view', (i % 5 < (treated ? 3 : 2) ? 1 : 0) + (i % 7 === 0 ? 2 : 0)],
      ],
    };
  });
}

/** The CSV's columns that hold a variant's numbers, and where the snapshot keeps each. */
const NUMBERS: Array<[string, (variant: any) => number | null | undefined]> = [
  ['sample_size', (v) => v.sample_size],
  ['conversions', (v) => v.conversions],
  ['observed_rate', (v) => v.observed_rate],
  ['posterior_mean', (v) => v.posterior.mean],
  ['posterior_ci_low', (v) => v.posterior.credible_interval_95?.[0]],
  ['posterior_ci_high', (v) => v.posterior.credible_interval_95?.[1]],
  ['prob_best', (v) => v.prob_best],
  ['expected_loss', (v) => v.expected_loss_if_stop_now],
  ['effect_absolute', (v) => v.effect?.absolute.mean],
  ['effect_absolute_ci_low', (v) => v.effect?.absolute.credible_interval_95[0]],
  ['effect_absolute_ci_high', (v) => v.effect?.absolute.credible_interval_95[1]],
  ['effect_relative', (v) => v.effect?.relative.mean],
  ['effect_relative_ci_low', (v) => v.effect?.relative.credible_interval_95?.[0]],
  ['effect_relative_ci_high', (v) => v.effect?.relative.credible_interval_95?.[1]],
  ['chance_to_beat_control', (v) => v.effect?.chance_to_beat_control],
];

/** A CSV cell holds the snapshot's number exactly, or is empty where the snapshot has none. */
function expectWritten(cell: string | undefined, value: number | null | undefined, what: string): void {
  if (value === null || value === undefined) expect(cell, what).toBe('');
  else expect(Number(cell), what).toBe(value);
}

describeEachDialect(
  'exports: every metric’s breakdowns, as the snapshot has them',
  (server) => {
    let key: string;
    let experimentId: string;
    let snapshot: any;

    beforeAll(async () => {
      clock.set(T0);
      const boot = await server().bootstrap('Export slices');
      key = boot.key;
      const purchases = await createMetric(server(), key, { key: 'purchases', name: 'Purchases', event_key: 'buy', kind: 'count' });
      const errors = await createMetric(server(), key, { key: 'errors', name: 'Checkout errors', event_key: 'error', kind: 'count', higher_is_better: false });
      // A count, as the others: the script's Beta effects (numerical integrals) take minutes for this many slices on a loaded machine.
      const viewed = await createMetric(server(), key, { key: 'viewed', name: 'Viewed', event_key: 'view', kind: 'count' });
      const experiment = await createExperiment(server(), key, {
        environment_id: boot.environmentId,
        key: KEY,
        variants: VARIANTS,
        primary_metric_id: purchases,
        guardrail_metric_ids: [errors],
        secondary_metric_ids: [viewed],
        dimensions: ['country'],
      });
      experimentId = experiment.id;
      const units = planUnits(400);
      for (let start = 0; start < units.length; start += 100) {
        const answers = await Promise.all(
          units.slice(start, start + 100).map((unit) =>
            server().request('POST', '/v1/assign', {
              key,
              body: { experiment_key: KEY, unit_id: unit.id, context: unit.country === null ? {} : { country: unit.country }, log_exposure: true },
            }),
          ),
        );
        for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      }
      const events: OutgoingEvent[] = units.flatMap((unit) =>
        unit.events.flatMap(([eventKey, count]) =>
          Array.from({ length: count }, (_, j) => ({ event_key: eventKey, unit_id: unit.id, occurred_at: T0 + (j + 1) * HOUR })),
        ),
      );
      clock.set(T0 + 8 * HOUR);
      await sendEvents(server(), key, events);
      snapshot = await compute(server(), key, experimentId);
      expect(snapshot.metric_breakdowns.map((entry: any) => [entry.metric_key, entry.role])).toEqual([
        ['errors', 'guardrail'],
        ['viewed', 'secondary'],
      ]);
    }, 120_000);

    it('exports a CSV row per metric, slice and variant with the snapshot’s numbers for the guardrail and the secondary metric', async () => {
      const exported = await server().request('GET', `/v1/experiments/${experimentId}/results/export?format=csv`, { key });
      expect(exported.status).toBe(200);
      expect(exported.text).not.toContain('"');
      const [header, ...rows] = parseCsv(exported.text) as [string[], ...string[][]];
      const at = (row: string[], column: string) => {
        expect(header, column).toContain(column);
        return row[header.indexOf(column)];
      };
      const sliceRows = (metricKey: string) => rows.filter((row) => at(row, 'metric_key') === metricKey && at(row, 'dimension') !== '');
      const expected = [{ metric_key: 'purchases', role: 'primary', name: 'Purchases', breakdowns: snapshot.breakdowns }, ...snapshot.metric_breakdowns];
      for (const entry of expected) {
        const rowsOfMetric = sliceRows(entry.metric_key);
        let count = 0;
        for (const breakdown of entry.breakdowns) {
          for (const slice of breakdown.values) {
            for (const variant of slice.per_variant) {
              count += 1;
              const what = `${entry.metric_key} ${breakdown.dimension}=${slice.value} ${variant.variant_key}`;
              const matching = rowsOfMetric.filter(
                (row) =>
                  at(row, 'dimension') === breakdown.dimension && at(row, 'dimension_value') === slice.value && at(row, 'variant_key') === variant.variant_key,
              );
              expect(matching, what).toHaveLength(1);
              const row = matching[0] as string[];
              expect([at(row, 'metric_role'), at(row, 'metric_name'), at(row, 'dimension_label')], what).toEqual([
                entry.role,
                entry.metric_name ?? entry.name,
                slice.label,
              ]);
              for (const [column, read] of NUMBERS) expectWritten(at(row, column), read(variant), `${what} ${column}`);
              expectWritten(at(row, 'srm_p_value'), slice.srm_chi_squared_p, `${what} the slice's SRM`);
              expect([Number(at(row, 'slice_units')), at(row, 'significant_after_correction')], what).toEqual([
                slice.units,
                String(slice.significant_after_correction),
              ]);
            }
          }
        }
        expect(rowsOfMetric, `${entry.metric_key}: no row beyond the snapshot's slices`).toHaveLength(count);
        expect(count, `${entry.metric_key} has slices`).toBeGreaterThan(4);
      }
      // The guardrail's harm in France is in the export as the snapshot found it.
      const france = snapshot.metric_breakdowns[0].breakdowns[0].values.find((slice: any) => slice.value === 'fr');
      const franceRow = sliceRows('errors').find((row) => at(row, 'dimension_value') === 'fr' && at(row, 'variant_key') === 'treatment') as string[];
      expect(Number(at(franceRow, 'effect_absolute'))).toBe(france.per_variant[1].effect.absolute.mean);
      expect(france.per_variant[1].effect.absolute.mean).toBeGreaterThan(0.5);
      // The secondary metric's whole-experiment rows come before the breakdowns.
      const secondary = rows.filter((row) => at(row, 'metric_role') === 'secondary' && at(row, 'dimension') === '');
      expect(secondary.map((row) => Number(at(row, 'sample_size')))).toEqual(snapshot.secondary_metrics[0].per_variant.map((v: any) => v.sample_size));
    });

    it('gives the notebook every metric’s slices, and its script recomputes them with SciPy', async () => {
      const exported = await server().request('GET', `/v1/experiments/${experimentId}/results/export?format=notebook`, { key });
      expect(exported.status).toBe(200);
      const metrics = exported.body.metrics;
      expect(metrics.map((metric: any) => [metric.key, metric.role, metric.model])).toEqual([
        ['purchases', 'primary', 'normal'],
        ['viewed', 'secondary', 'normal'],
        ['errors', 'guardrail', 'normal'],
      ]);
      const errors = metrics[2];
      const fromSnapshot = snapshot.metric_breakdowns[0].breakdowns.flatMap((breakdown: any) =>
        breakdown.values.map((slice: any) => [breakdown.dimension, slice.value, slice.per_variant.map((v: any) => [v.sample_size, v.posterior.mean])]),
      );
      expect(errors.slices.map((slice: any) => [slice.dimension, slice.value, slice.variants.map((v: any) => [v.n, v.reported.posterior_mean])])).toEqual(
        fromSnapshot,
      );

      const run = runNotebook(exported.body);
      expect(run.output).toContain('all numbers recomputed');
      expect(run.output).toContain('errors country=fr / treatment absolute effect');
      expect(run.output).toContain('viewed country=de / treatment chance to beat control');
      expect(run.status, run.output).toBe(0);
      // A slice's number is checked too: changed, the script fails on it.
      const tampered = structuredClone(exported.body);
      tampered.metrics[2].slices[0].variants[1].reported.effect.absolute.mean += 0.01;
      const failed = runNotebook(tampered);
      expect(failed.status).toBe(1);
      expect(failed.output).toMatch(/BAD errors country=fr \/ treatment absolute effect/);
    }, 180_000);
  },
  { clock },
);

import { expect } from 'vitest';
import type { TestServer } from '../../support/server.js';
import { random } from '../incremental-support.js';
import { DAY, HOUR, createExperiment, createMetric, type OutgoingEvent } from '../support.js';
import type { CaseWorld, ConformanceCase } from './harness.js';
import { idNames, standardSteps } from './steps.js';
import { quantileCase } from './quantile-case.js';
import { sequenceCase } from './sequence-case.js';

/**
 * The cases of the conformance suite. Each is small (tens of units, a few hundred events) and
 * seeded: the same stream on every store.
 */

const COUNTRIES = ['de', 'fr', 'us', 'br'];
const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;

interface StandardWorld extends CaseWorld {
  units: string[];
  rand: () => number;
}

/** Assigns (and exposes) a unit with a country, as a client would. */
async function assign(server: TestServer, world: StandardWorld, unit: string): Promise<void> {
  const body = { experiment_key: world.experiment.key, unit_id: unit, context: { country: pick(world.rand, COUNTRIES) } };
  const response = await server.request('POST', '/v1/assign', { key: world.key, body });
  expect(response.status, response.text).toBe(200);
}

/** Up to three purchases and two views per unit, some before the exposure (CUPED's lookback) and some late. */
function eventsFor(world: StandardWorld, units: readonly string[], now: number): OutgoingEvent[] {
  const { rand } = world;
  const events: OutgoingEvent[] = [];
  for (const unit of units) {
    const purchases = Math.floor(rand() * 4);
    for (let k = 0; k < purchases; k += 1) {
      // Amounts in quarters, a few large ones for the caps to cut, some before the exposure.
      const amount = rand() < 0.1 ? 200 + Math.floor(rand() * 400) : Math.floor(rand() * 240) / 4;
      const offset = rand() < 0.2 ? -2 * DAY : -Math.floor(rand() * HOUR);
      events.push({ event_key: 'buy', unit_id: unit, occurred_at: now + offset, properties: { amount } });
    }
    const views = Math.floor(rand() * 3);
    for (let k = 0; k < views; k += 1) events.push({ event_key: 'view', unit_id: unit, occurred_at: now - k * 1000 });
  }
  return events;
}

/**
 * Every metric kind the stores compute (binary, count, sum with a percentile cap, mean with a
 * fixed cap, ratio), CUPED on, a country breakdown; then more events (some late), a re-bucket
 * with re-assignments, and a stop followed by events after it.
 */
export const standardCase: ConformanceCase<StandardWorld> = {
  name: 'binary, count, sum, mean and ratio metrics with caps, CUPED and a breakdown',
  start: Date.UTC(2033, 8, 1, 12),
  async setUp(server, clock) {
    const { key, environmentId, workspaceId, keyId } = await server.bootstrap('conformance');
    const buy = { event_key: 'buy', property_path: 'amount' };
    const ids: Record<string, string> = {};
    ids.revenue = await createMetric(server, key, { key: 'revenue', kind: 'revenue', ...buy, aggregation: 'sum', capping: { type: 'percentile', value: 0.9 } });
    ids.avg = await createMetric(server, key, { key: 'avg_amount', kind: 'revenue', ...buy, aggregation: 'mean', capping: { type: 'absolute', value: 150 } });
    ids.orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
    ids.converted = await createMetric(server, key, { key: 'converted', event_key: 'buy', kind: 'binary' });
    ids.views = await createMetric(server, key, { key: 'views', event_key: 'view', kind: 'count' });
    ids.aov = await createMetric(server, key, { key: 'aov', kind: 'ratio', numerator_metric_id: ids.revenue, denominator_metric_id: ids.orders });
    const experiment = await createExperiment(server, key, {
      environment_id: environmentId,
      key: 'conformance',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: ids.revenue,
      guardrail_metric_ids: [ids.converted, ids.orders, ids.avg, ids.aov, ids.views],
      dimensions: ['country'],
      variance_reduction: { method: 'cuped', lookback_days: 7 },
    });
    const names = idNames({ experimentId: experiment.id, workspaceId, environmentId, keyId }, ids);
    const world: StandardWorld = { key, experiment, names, units: [], rand: random(54) };
    clock.advance(HOUR);
    return world;
  },
  covers(snapshots) {
    const last = snapshots.at(-1);
    for (const snapshot of snapshots) {
      expect(snapshot.primary_metric.cap_applied, 'the percentile cap').toBeGreaterThan(0);
      expect(snapshot.primary_metric.cuped.applied, 'CUPED').toBe(true);
      expect(snapshot.guardrails.map((guardrail: any) => guardrail.metric_key)).toEqual(['converted', 'orders', 'avg_amount', 'aov', 'views']);
      const country = snapshot.breakdowns.find((breakdown: any) => breakdown.dimension === 'country');
      expect(country.values.length, 'the country breakdown').toBeGreaterThan(1);
    }
    expect(snapshots[1].late_event_count, 'late events').toBeGreaterThan(0);
    expect(
      last.per_variant.reduce((sum: number, variant: any) => sum + variant.sample_size, 0),
      'units after the re-bucket',
    ).toBe(48);
  },
  steps: standardSteps(assign, eventsFor),
};

/** Every case the suite plays; a new metric kind adds its own. */
export const CONFORMANCE_CASES: readonly ConformanceCase<any>[] = [standardCase, quantileCase, sequenceCase];

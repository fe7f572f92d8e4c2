import { expect } from 'vitest';
import type { TestServer } from '../../support/server.js';
import { random } from '../incremental-support.js';
import { DAY, HOUR, createExperiment, createMetric, type OutgoingEvent } from '../support.js';
import type { CaseWorld, ConformanceCase } from './harness.js';
import { idNames, standardSteps } from './steps.js';

/**
 * Quantile metrics on every store: an event-level p90 with a percentile cap (the primary), a
 * unit-level median of sums and a unit-level p75 of means with an absolute cap, CUPED on (a
 * quantile is left unadjusted); then more events (some late), a re-bucket with re-assignments,
 * and a stop followed by events after it.
 */
interface QuantileWorld extends CaseWorld {
  units: string[];
  rand: () => number;
}

async function assign(server: TestServer, world: QuantileWorld, unit: string): Promise<void> {
  const response = await server.request('POST', '/v1/assign', { key: world.key, body: { experiment_key: world.experiment.key, unit_id: unit } });
  expect(response.status, response.text).toBe(200);
}

/** Up to four page loads per unit (ms, some slow, ties on purpose), some before the exposure, some without a number. */
function loadsFor(world: QuantileWorld, units: readonly string[], now: number): OutgoingEvent[] {
  const { rand } = world;
  const events: OutgoingEvent[] = [];
  for (const unit of units) {
    const loads = Math.floor(rand() * 5);
    for (let k = 0; k < loads; k += 1) {
      const ms = rand() < 0.1 ? 2000 + Math.floor(rand() * 3000) : 100 + Math.floor(rand() * 60) * 5;
      const offset = rand() < 0.15 ? -2 * DAY : -Math.floor(rand() * HOUR);
      events.push({ event_key: 'load', unit_id: unit, occurred_at: now + offset, properties: rand() < 0.05 ? { ms: 'n/a' } : { ms } });
    }
  }
  return events;
}

export const quantileCase: ConformanceCase<QuantileWorld> = {
  name: 'quantile metrics at the event and unit levels with caps',
  start: Date.UTC(2033, 9, 1, 12),
  async setUp(server, clock) {
    const { key, environmentId, workspaceId, keyId } = await server.bootstrap('conformance-quantiles');
    const load = { event_key: 'load', property_path: 'ms', kind: 'quantile', higher_is_better: false };
    const ids: Record<string, string> = {};
    ids.p90 = await createMetric(server, key, { key: 'load_p90', ...load, quantile: 0.9, capping: { type: 'percentile', value: 0.95 } });
    ids.median = await createMetric(server, key, { key: 'load_sum_median', ...load, quantile: 0.5, quantile_level: 'unit' });
    ids.p75 = await createMetric(server, key, {
      key: 'load_mean_p75',
      ...load,
      quantile: 0.75,
      quantile_level: 'unit',
      aggregation: 'mean',
      capping: { type: 'absolute', value: 300 },
    });
    const experiment = await createExperiment(server, key, {
      environment_id: environmentId,
      key: 'conformance-quantiles',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: ids.p90,
      guardrail_metric_ids: [ids.median],
      secondary_metric_ids: [ids.p75],
      variance_reduction: { method: 'cuped', lookback_days: 7 },
    });
    const names = idNames({ experimentId: experiment.id, workspaceId, environmentId, keyId }, ids);
    const world: QuantileWorld = { key, experiment, names, units: [], rand: random(58) };
    clock.advance(HOUR);
    return world;
  },
  covers(snapshots) {
    for (const snapshot of snapshots) {
      expect(snapshot.primary_metric.cap_applied, 'the percentile cap').toBeGreaterThan(0);
      expect(snapshot.primary_metric.cuped.applied, 'no CUPED on a quantile').toBe(false);
      for (const perVariant of [snapshot.per_variant, snapshot.guardrails[0].per_variant, snapshot.secondary_metrics[0].per_variant]) {
        for (const variant of perVariant) expect(variant.quantile.value, 'a quantile per variant').toEqual(expect.any(Number));
      }
      expect(snapshot.secondary_metrics[0].cap_applied, 'the absolute cap').toBe(300);
    }
    expect(snapshots[1].late_event_count, 'late events').toBeGreaterThan(0);
    const effect = snapshots.at(-1).per_variant.find((variant: any) => !variant.is_control).effect;
    expect(effect.relative.credible_interval_95, 'an effect with its interval').toHaveLength(2);
  },
  steps: standardSteps(assign, loadsFor, 'loads'),
};

import { expect } from 'vitest';
import type { TestServer } from '../../support/server.js';
import { random } from '../incremental-support.js';
import { DAY, HOUR, MINUTE, createExperiment, createMetric, sendEvents, type OutgoingEvent } from '../support.js';
import type { CaseWorld, ConformanceCase } from './harness.js';
import { idNames, stopExperiment, unassign } from './steps.js';

/**
 * Funnel and retention metrics on every store (docs/metrics.md "Funnel metrics", "Retention
 * metrics"): a funnel with property conditions as the primary, retention over any event as a
 * guardrail and over one event as a secondary; units exposed over a day and a half (so some
 * retention windows are still open at each snapshot), a re-bucket, and a stop with events after it.
 */
interface SequenceWorld extends CaseWorld {
  units: string[];
  exposedAt: Map<string, number>;
  rand: () => number;
}

async function assign(server: TestServer, world: SequenceWorld, unit: string, now: number): Promise<void> {
  const response = await server.request('POST', '/v1/assign', { key: world.key, body: { experiment_key: world.experiment.key, unit_id: unit } });
  expect(response.status, response.text).toBe(200);
  if (!world.exposedAt.has(unit)) world.exposedAt.set(unit, now);
}

/** Views, carts and purchases around each unit's exposure, up to `now`, with properties the conditions split. */
function eventsFor(world: SequenceWorld, units: readonly string[], now: number): OutgoingEvent[] {
  const { rand } = world;
  const events: OutgoingEvent[] = [];
  for (const unit of units) {
    const exposed = world.exposedAt.get(unit) ?? now;
    const count = 3 + Math.floor(rand() * 8);
    for (let k = 0; k < count; k += 1) {
      const key = ['view', 'cart', 'buy', 'ping'][Math.floor(rand() * 4)] as string;
      const at = Math.min(now - MINUTE, exposed - HOUR + Math.floor(rand() * 16 * HOUR));
      const properties = key === 'cart' ? { plan: rand() < 0.6 ? 'pro' : 'free' } : key === 'buy' ? { amount: Math.floor(rand() * 30) } : {};
      events.push({ event_key: key, unit_id: unit, occurred_at: at, properties });
    }
  }
  return events;
}

export const sequenceCase: ConformanceCase<SequenceWorld> = {
  name: 'funnel and retention metrics with step conditions, open windows, a re-bucket and a stop',
  start: Date.UTC(2033, 9, 4, 8),
  async setUp(server, clock) {
    const { key, environmentId, workspaceId, keyId } = await server.bootstrap('sequences');
    const ids: Record<string, string> = {};
    ids.funnel = await createMetric(server, key, {
      key: 'checkout',
      kind: 'funnel',
      steps: [
        { event_key: 'view' },
        { event_key: 'cart', where: { property_path: 'plan', op: 'eq', value: 'pro' } },
        { event_key: 'buy', where: { property_path: 'amount', op: 'gte', value: 10 } },
      ],
      window: 'PT12H',
    });
    ids.back = await createMetric(server, key, { key: 'back', kind: 'retention', retention: { from: 'PT1H', to: 'P1D' } });
    ids.bought = await createMetric(server, key, { key: 'bought', kind: 'retention', event_key: 'buy', retention: { from: 'PT0S', to: 'PT6H' } });
    const experiment = await createExperiment(server, key, {
      environment_id: environmentId,
      key: 'sequences',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: ids.funnel,
      guardrail_metric_ids: [ids.back],
      secondary_metric_ids: [ids.bought],
    });
    const names = idNames({ experimentId: experiment.id, workspaceId, environmentId, keyId }, ids);
    clock.advance(HOUR);
    return { key, experiment, names, units: [], exposedAt: new Map(), rand: random(77) };
  },
  covers(snapshots) {
    for (const snapshot of snapshots) {
      expect(snapshot.primary_metric.kind).toBe('funnel');
      for (const variant of snapshot.per_variant) expect(variant.steps).toHaveLength(3);
      expect(snapshot.guardrails[0].per_variant[0].pending_units, 'retention').toBeTypeOf('number');
    }
    const last = snapshots.at(-1);
    const reached = last.per_variant.reduce((sum: number, variant: any) => sum + variant.conversions, 0);
    const viewed = last.per_variant.reduce((sum: number, variant: any) => sum + variant.steps[0].conversions, 0);
    expect(reached, 'units completing the funnel').toBeGreaterThan(0);
    expect(reached, 'units dropping off').toBeLessThan(viewed);
    const pending = snapshots.map((snapshot) => snapshot.guardrails[0].per_variant.reduce((sum: number, variant: any) => sum + variant.pending_units, 0));
    expect(Math.max(...pending), 'open retention windows').toBeGreaterThan(0);
    const eligible = last.guardrails[0].per_variant.reduce((sum: number, variant: any) => sum + variant.sample_size, 0);
    expect(eligible, 'closed retention windows').toBeGreaterThan(0);
  },
  steps: [
    {
      name: 'first exposures and their events',
      async run(server, world, clock) {
        for (let i = 0; i < 30; i += 1) world.units.push(`unit-${i}`);
        for (const unit of world.units) await assign(server, world, unit, clock.now());
        clock.advance(13 * HOUR);
        await sendEvents(server, world.key, eventsFor(world, world.units, clock.now()));
      },
    },
    {
      name: 'more units a day later',
      async run(server, world, clock) {
        clock.advance(DAY);
        const fresh = Array.from({ length: 12 }, (_, i) => `unit-${30 + i}`);
        for (const unit of fresh) await assign(server, world, unit, clock.now());
        world.units.push(...fresh);
        clock.advance(8 * HOUR);
        await sendEvents(server, world.key, eventsFor(world, world.units, clock.now()));
      },
    },
    {
      name: 'a re-bucket and re-assignments',
      async run(server, world, clock) {
        clock.advance(HOUR);
        await unassign(server, world, world.units.slice(0, 5));
        for (const unit of world.units.slice(0, 5)) world.exposedAt.delete(unit);
        clock.advance(HOUR);
        for (const unit of world.units.slice(0, 3)) await assign(server, world, unit, clock.now());
        clock.advance(2 * HOUR);
        await sendEvents(server, world.key, eventsFor(world, world.units.slice(0, 12), clock.now()));
      },
    },
    {
      name: 'a stop, then events after it',
      async run(server, world, clock) {
        clock.advance(HOUR);
        await stopExperiment(server, world);
        clock.advance(DAY);
        await sendEvents(server, world.key, eventsFor(world, world.units, clock.now()));
      },
    },
  ],
};

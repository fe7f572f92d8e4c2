import { expect } from 'vitest';
import type { BufferedEvent } from '../../../src/buffer/types.js';
import { computeById } from '../../../src/features/analysis/service.js';
import { newId } from '../../../src/lib/ids.js';
import type { ManualClock } from '../../support/clock.js';
import type { TestServer } from '../../support/server.js';
import { computeIn, expectSameAnalysis } from '../incremental-support.js';
import { HOUR, createExperiment, createMetric, exposeExactly, sendEvents, type OutgoingEvent } from '../support.js';

/**
 * The small experiment the incremental tests of every store start from (incremental-faults on
 * SQLite and PostgreSQL, clickhouse-incremental on ClickHouse): orders (count, primary), revenue
 * (sum) and average amount (mean) over one `buy` event, CUPED with a 7-day lookback, a country
 * dimension; 10 units exposed per variant, one purchase each an hour later.
 */
export interface SmallExperiment {
  key: string;
  workspaceId: string;
  experiment: any;
  units: string[];
}

export async function smallExperiment(server: TestServer, clock: ManualClock, start: number, name: string): Promise<SmallExperiment> {
  clock.set(start);
  const { key, environmentId, workspaceId } = await server.bootstrap(name);
  const buy = { event_key: 'buy', kind: 'revenue', property_path: 'amount' };
  const orders = await createMetric(server, key, { key: 'orders', event_key: 'buy', kind: 'count' });
  const revenue = await createMetric(server, key, { key: 'revenue', ...buy, aggregation: 'sum' });
  const avg = await createMetric(server, key, { key: 'avg', ...buy, aggregation: 'mean' });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: name,
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    dimensions: ['country'],
    primary_metric_id: orders,
    guardrail_metric_ids: [revenue, avg],
    variance_reduction: { method: 'cuped', lookback_days: 7 },
  });
  const exposed = await exposeExactly(server, key, experiment, { control: 10, treatment: 10 }, name);
  const units = [...exposed.control!, ...exposed.treatment!];
  clock.advance(HOUR);
  await sendEvents(
    server,
    key,
    units.map((unit, i): OutgoingEvent => ({ event_key: 'buy', unit_id: unit, occurred_at: clock.now() - i * 1000, properties: { amount: i / 7 + 0.1 } })),
  );
  return { key, workspaceId, experiment, units };
}

/** A purchase as the drainer hands it to the store (for tests that drive drains themselves). */
export function drainedPurchase(setup: SmallExperiment, clock: ManualClock, unit: string, amount: number): BufferedEvent {
  const now = clock.now();
  return {
    id: newId(),
    workspace_id: setup.workspaceId,
    unit_id: unit,
    event_key: 'buy',
    properties: JSON.stringify({ amount }),
    occurred_at: now,
    received_at: now,
    late: 0,
    client_event_id: null,
  };
}

/**
 * Four incremental computations at once after a purchase per unit: exactly one reads the new
 * events, and every one equals the full computation (each store's refreshes of one experiment
 * take turns).
 */
export async function expectConcurrentRefreshesCountOnce(server: TestServer, clock: ManualClock, setup: SmallExperiment): Promise<void> {
  await computeIn(server, setup.key, setup.experiment.id, 'incremental');
  clock.advance(HOUR);
  const events = setup.units.map((unit, i): OutgoingEvent => ({
    event_key: 'buy',
    unit_id: unit,
    occurred_at: clock.now() - i,
    properties: { amount: 2 * i },
  }));
  await sendEvents(server, setup.key, events);
  const snapshots = await Promise.all([1, 2, 3, 4].map(() => computeIn(server, setup.key, setup.experiment.id, 'incremental')));
  expect(snapshots.map((snapshot) => snapshot.computation.events_read).sort((a, b) => a - b)).toEqual([0, 0, 0, events.length]);
  const full = await computeIn(server, setup.key, setup.experiment.id, 'full');
  snapshots.forEach((snapshot, index) => expectSameAnalysis(snapshot, full, `concurrent refresh ${index}`));
}

/** An incremental computation whose refresh dies after its writes and before its commit (a process killed there). */
export async function refreshDyingBeforeCommit(server: TestServer, experimentId: string): Promise<void> {
  const dying = computeById(server.ctx, experimentId, {
    trigger: 'api',
    mode: 'incremental',
    refresh: {
      beforeCommit: async () => {
        throw new Error('the process died here');
      },
    },
  });
  await expect(dying).rejects.toThrow('the process died here');
}

import { expect } from 'vitest';
import { chooseVariant } from '../../src/features/assignment/bucketing.js';
import type { TestServer } from '../support/server.js';
export { ManualClock } from '../support/clock.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Moves every buffered event into the events table (or ClickHouse's) now (what the drainer does in the background). */
export async function drainEvents(server: TestServer): Promise<void> {
  for (;;) {
    const { more } = await server.ctx.buffer.drain(server.ctx.eventStorage.persist, 5_000);
    if (!more && (await server.ctx.buffer.status()).pending === 0) return;
  }
}

export async function createMetric(server: TestServer, key: string, body: Record<string, unknown>): Promise<string> {
  const created = await server.request('POST', '/v1/metrics', { key, body: { name: String(body.key), ...body } });
  if (created.status !== 201) throw new Error(`metric ${String(body.key)}: ${created.status} ${created.text}`);
  return created.body.id as string;
}

export async function createExperiment(server: TestServer, key: string, body: Record<string, unknown>, start = true): Promise<any> {
  const created = await server.request('POST', '/v1/experiments', { key, body: { name: 'Analysis', hypothesis: 'it helps', unit_type: 'user', ...body } });
  if (created.status !== 201) throw new Error(`experiment: ${created.status} ${created.text}`);
  if (!start) return created.body;
  const started = await server.request('POST', `/v1/experiments/${created.body.id}/start`, { key });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${started.text}`);
  return started.body;
}

/**
 * Exposes exactly `targets[variant]` units per variant through the API, whatever the hash
 * decides: each candidate unit is assigned without an exposure, and only the ones its variant
 * still needs are then exposed through POST /v1/exposures. Returns the unit ids per variant, in
 * exposure order (unit `index` of a variant is the scenario's i).
 */
/** Requests in flight at once while exposing units (the server group-commits concurrent assignments). */
const REQUESTS_PER_ROUND = 100;

/**
 * Exposes exactly `targets[variant]` units per variant through POST /v1/assign. The unit ids are
 * picked with the documented bucketing rule (FNV-1a v2 on experiment key and unit id) so each
 * variant gets its count; the server's answer is checked against that choice. Returns the unit
 * ids per variant in order (unit `index` of a variant is the scenario's i).
 */
export async function exposeExactly(
  server: TestServer,
  key: string,
  experiment: { key: string; variants: Array<{ key: string; weight: number }> },
  targets: Record<string, number>,
  prefix = 'u',
): Promise<Record<string, string[]>> {
  const units: Record<string, string[]> = Object.fromEntries(Object.keys(targets).map((variant) => [variant, []]));
  const planned: Array<{ unit_id: string; variant: string }> = [];
  for (let n = 0; planned.length < Object.values(targets).reduce((sum, target) => sum + target, 0); n += 1) {
    const unit_id = `${prefix}-${n}`;
    const variant = chooseVariant(experiment.key, unit_id, experiment.variants).key;
    const list = units[variant];
    if (list && list.length < (targets[variant] ?? 0)) {
      list.push(unit_id);
      planned.push({ unit_id, variant });
    }
  }
  for (let start = 0; start < planned.length; start += REQUESTS_PER_ROUND) {
    const round = planned.slice(start, start + REQUESTS_PER_ROUND);
    const answers = await Promise.all(
      round.map((unit) => server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: unit.unit_id } })),
    );
    answers.forEach((answer, index) => {
      expect(answer.status).toBe(200);
      expect(answer.body.variant).toBe(round[index]?.variant);
    });
  }
  return units;
}

/** Two arms, half the traffic each: the experiment most tests need. */
export const TWO_ARMS = [
  { key: 'control', weight: 50 },
  { key: 'treatment', weight: 50 },
];

/** Assigns each unit through POST /v1/assign (100 requests at a time); returns their variants, in order. */
export async function assignUnits(server: TestServer, key: string, experimentKey: string, unitIds: readonly string[]): Promise<string[]> {
  const variants: string[] = [];
  for (let start = 0; start < unitIds.length; start += 100) {
    const answers = await Promise.all(
      unitIds.slice(start, start + 100).map((unit_id) => server.request('POST', '/v1/assign', { key, body: { experiment_key: experimentKey, unit_id } })),
    );
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      variants.push(answer.body.variant as string);
    }
  }
  return variants;
}

export interface OutgoingEvent {
  event_key: string;
  unit_id: string;
  occurred_at: number;
  properties?: Record<string, unknown>;
}

/** Sends events through POST /v1/events/batch (500 per request) and waits until they are stored. */
export async function sendEvents(server: TestServer, key: string, events: readonly OutgoingEvent[]): Promise<void> {
  for (let start = 0; start < events.length; start += 500) {
    const batch = events.slice(start, start + 500).map((event) => ({
      event_key: event.event_key,
      unit_id: event.unit_id,
      occurred_at: new Date(event.occurred_at).toISOString(),
      properties: event.properties ?? {},
    }));
    const response = await server.request('POST', '/v1/events/batch', { key, body: { events: batch } });
    expect(response.status, response.text).toBe(202);
    expect(response.body.rejected).toEqual([]);
  }
  await drainEvents(server);
}

export async function compute(server: TestServer, key: string, experimentId: string, mode?: 'incremental' | 'full'): Promise<any> {
  const query = mode ? `?mode=${mode}` : '';
  const response = await server.request('POST', `/v1/experiments/${experimentId}/results/compute${query}`, { key });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

/** |actual - expected| <= tolerance, with a message naming the field. */
export function expectClose(actual: number | null | undefined, expected: number, tolerance: number, what: string): void {
  expect(actual, what).toEqual(expect.any(Number));
  const difference = Math.abs((actual as number) - expected);
  expect(difference, `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tolerance);
}

/** Independent reference arithmetic for the analysis tests: plain sums over per-unit values. */
export const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
export const mean = (values: readonly number[]) => sum(values) / values.length;

/** Sample covariance (n − 1), two-pass. */
export function covariance(x: readonly number[], y: readonly number[]): number {
  const mx = mean(x);
  const my = mean(y);
  return sum(x.map((value, i) => (value - mx) * ((y[i] as number) - my))) / (x.length - 1);
}

/** Type 7 quantile (numpy's default) of the nonzero values. */
export function quantileOfNonzero(values: readonly number[], q: number): number {
  const sorted = values.filter((value) => value !== 0).sort((a, b) => a - b);
  const h = (sorted.length - 1) * q;
  const low = Math.floor(h);
  return (sorted[low] as number) + (h - low) * ((sorted[Math.min(low + 1, sorted.length - 1)] as number) - (sorted[low] as number));
}

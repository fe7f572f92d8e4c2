import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { testDialects } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, createExperiment, createMetric, HOUR, ManualClock, sendEvents, type OutgoingEvent } from './support.js';
import { comparable, expectSameNumbers } from './snapshot-compare.js';

/**
 * Breakdowns by dimensions whose values are integers beyond 64 bits (docs/analysis.md "Breakdowns
 * by dimension", "ClickHouse"): sent as JSON numbers (2^64 and above, beyond Int64's minimum, 1e21
 * and above) and as strings of 20 to 40 digits, in the assign context of units on SQLite (and
 * PostgreSQL where configured) and on a server whose analysis is in ClickHouse. Every slice of
 * ClickHouse's snapshot (its label, units and sums) equals the SQL store's, and no unit loses its
 * slice: a number is labelled with the text of the double the API read (every JSON number in the
 * API is one), a string with every one of its digits.
 */
const T0 = Date.UTC(2033, 7, 1, 12);
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse big dimension values test is skipped.`);

/** Eight values per dimension; unit i takes value i % 8 of each, so the slices differ in size and sums. */
const ORGS: unknown[] = [2 ** 64, 2 ** 64 + 4096, -(2 ** 63) - 2048, 1e21, Number('123456789012345678901234567890'), 2 ** 63, 42, 2 ** 53 + 2];
const CODES: string[] = [
  '18446744073709551617',
  '18446744073709551618',
  '-9223372036854775809',
  '123456789012345678901234567890123456789',
  '000018446744073709551616',
  '99999999999999999999',
  '1e400',
  '7',
];
const UNITS = 48;

async function scenario(server: TestServer, clock: ManualClock): Promise<{ key: string; experimentId: string }> {
  clock.set(T0);
  const { key, environmentId } = await server.bootstrap('Big dimension values');
  const revenue = await createMetric(server, key, { key: 'revenue', event_key: 'buy', kind: 'revenue', property_path: 'amount', aggregation: 'sum' });
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: 'big-dimensions',
    variants: [
      { key: 'control', weight: 50, is_control: true },
      { key: 'treatment', weight: 50 },
    ],
    dimensions: ['org', 'code'],
    primary_metric_id: revenue,
  });
  const events: OutgoingEvent[] = [];
  for (let i = 0; i < UNITS; i += 1) {
    const unit_id = `big-${i}`;
    const context = { org: ORGS[i % ORGS.length], code: CODES[(i * 3) % CODES.length] };
    const answer = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id, context } });
    expect(answer.status, answer.text).toBe(200);
    if (i % 4 !== 3) events.push({ event_key: 'buy', unit_id, occurred_at: T0 + HOUR, properties: { amount: 1 + ((i * 7) % 11) / 4 } });
  }
  clock.set(T0 + 3 * HOUR);
  await sendEvents(server, key, events);
  return { key, experimentId: experiment.id };
}

/** Each breakdown's slice labels, and the units in them (summed over variants). */
function slices(snapshot: any, dimension: string): Map<string, number> {
  const breakdown = snapshot.breakdowns.find((item: any) => item.dimension === dimension);
  return new Map(breakdown.values.map((value: any) => [value.value, value.units]));
}

suite(`breakdowns by dimension values beyond 64 bits in ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  const clocks = new Map<string, ManualClock>();
  const servers = new Map<string, TestServer>();
  const scenarios = new Map<string, { key: string; experimentId: string }>();

  beforeAll(async () => {
    for (const name of [...testDialects(), 'clickhouse'] as const) {
      const clock = new ManualClock(T0);
      const server =
        name === 'clickhouse' ? await startTestServer('sqlite', { clock, config: { clickhouse: TEST_CLICKHOUSE } }) : await startTestServer(name, { clock });
      clocks.set(name, clock);
      servers.set(name, server);
      scenarios.set(name, await scenario(server, clock));
    }
  }, 180_000);
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
  });

  const snapshotOf = (name: string) => {
    const { key, experimentId } = scenarios.get(name) as { key: string; experimentId: string };
    return compute(servers.get(name) as TestServer, key, experimentId, 'full');
  };

  it('gives every unit its slice, labelled with its stored text', async () => {
    const snapshot = await snapshotOf('clickhouse');
    expect(snapshot.computation.store).toBe('clickhouse');
    const orgs = slices(snapshot, 'org');
    const codes = slices(snapshot, 'code');
    expect([...orgs.keys()].sort()).toEqual(ORGS.map(String).sort());
    expect([...codes.keys()].sort()).toEqual([...CODES].sort());
    expect([...orgs.values()].reduce((a, b) => a + b, 0)).toBe(UNITS);
    expect([...codes.values()].reduce((a, b) => a + b, 0)).toBe(UNITS);
  });

  for (const dialect of testDialects())
    it(`equals the ${dialect} store's snapshot, slice by slice`, async () => {
      expectSameNumbers(comparable(await snapshotOf('clickhouse')), comparable(await snapshotOf(dialect)), `snapshot vs ${dialect}`);
    });
});

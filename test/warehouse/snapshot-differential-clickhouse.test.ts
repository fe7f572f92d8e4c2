// Issue #60 on ClickHouse (the embedded engine): the same check as snapshot-differential.test.ts,
// the events the first workspace stored placed in a fact table there. Verdict runs on SQLite (an
// embedded analysis engine would share the process's chdb session, which keeps readonly=1 once a
// source statement sets it); the table is written before any read-only statement runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, HOUR, ManualClock } from '../analysis/support.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from './sources.js';
import { expectSameSnapshot, seedBoth, T0, type Seeded } from './snapshot-support.js';

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

suite('snapshots of metrics on a ClickHouse fact table (chdb): the same as from Verdict’s own events', () => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: ChdbSource;
  let seeded: Seeded;

  beforeAll(async () => {
    source = await createChdbSource([
      "CREATE TABLE events (unit_id String, occurred_at DateTime64(3, 'UTC'), amount Nullable(Float64), event_key String) ENGINE = MergeTree ORDER BY unit_id",
    ]);
    server = await startTestServer('sqlite', { clock, config: { dataSources: ALLOW_PRIVATE } });
    seeded = await seedBoth(
      server,
      clock,
      async (stored) => {
        const values = stored.map((event) => {
          const amount = (JSON.parse(event.properties) as { amount?: unknown }).amount;
          const occurred = new Date(Number(event.occurred_at)).toISOString().replace('T', ' ').replace('Z', '');
          return { unit_id: event.unit_id, occurred_at: occurred, amount: typeof amount === 'number' ? amount : null, event_key: event.event_key };
        });
        await source.client.insert({ table: 'events', values, format: 'JSONEachRow' });
        return source.url;
      },
      'clickhouse',
    );
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  it('computes the same snapshot from the fact table as from the events', async () => {
    const fromEvents = await compute(server, seeded.events.boot.key, seeded.events.experimentId);
    const fromFacts = await compute(server, seeded.facts.boot.key, seeded.facts.experimentId);
    expect(fromEvents.primary_metric.cap_applied).toBeGreaterThan(0);
    expect(expectSameSnapshot(fromEvents, fromFacts)).toBeGreaterThan(100);
  });

  it('computes the same snapshot once the experiment stopped (rows from the stop on left out)', async () => {
    clock.set(T0 + 30 * HOUR);
    for (const side of [seeded.events, seeded.facts]) {
      const stopped = await server.request('POST', `/v1/experiments/${side.experimentId}/stop`, { key: side.boot.key, body: { reason: 'inconclusive' } });
      expect(stopped.status, stopped.text).toBe(200);
    }
    const fromEvents = await compute(server, seeded.events.boot.key, seeded.events.experimentId);
    const fromFacts = await compute(server, seeded.facts.boot.key, seeded.facts.experimentId);
    expect(expectSameSnapshot(fromEvents, fromFacts)).toBeGreaterThan(100);
  });
});

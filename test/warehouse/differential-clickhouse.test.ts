// Issue #60, item 3 on ClickHouse (the embedded engine): the same check as differential.test.ts,
// the events Verdict stored placed in a fact table there. One engine directory per process, and
// written before any read-only statement runs on it (the engine keeps readonly=1 for its session).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { HOUR, ManualClock } from '../analysis/support.js';
import { expectSameTotals, seedExperiment, T0, totalsBothWays } from './differential-support.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from './sources.js';

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

suite('warehouse analysis on ClickHouse (chdb): the same totals as from Verdict’s own events', () => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: ChdbSource;
  let workspaceId: string;
  let experimentId: string;

  beforeAll(async () => {
    source = await createChdbSource([
      "CREATE TABLE events (unit_id String, occurred_at DateTime64(3, 'UTC'), amount Nullable(Float64), event_key String) ENGINE = MergeTree ORDER BY unit_id",
    ]);
    server = await startTestServer('sqlite', { clock, config: { dataSources: ALLOW_PRIVATE } });
    let stored;
    ({ workspaceId, experimentId, stored } = await seedExperiment(server, clock));
    const values = stored.map((event) => {
      const amount = (JSON.parse(event.properties) as { amount?: unknown }).amount;
      const occurred = new Date(Number(event.occurred_at)).toISOString().replace('T', ' ').replace('Z', '');
      return { unit_id: event.unit_id, occurred_at: occurred, amount: typeof amount === 'number' ? amount : null, event_key: event.event_key };
    });
    await source.client.insert({ table: 'events', values, format: 'JSONEachRow' });
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  const both = (eventsBefore: number | null) =>
    totalsBothWays(server.ctx, { workspaceId, experimentId }, { kind: 'clickhouse', url: source.url, limits: ALLOW_PRIVATE }, eventsBefore);

  it('gives the same totals for every metric kind, window, cap and filter', async () => {
    const { fromEvents, fromSource } = await both(null);
    expect([...fromEvents.values()].reduce((units, variant) => units + variant.units, 0)).toBe(240);
    expectSameTotals(fromEvents, fromSource);
  });

  it('gives the same totals for a stopped experiment (events from the stop on are left out)', async () => {
    const { fromEvents, fromSource } = await both(T0 + 30 * HOUR);
    expectSameTotals(fromEvents, fromSource);
  });
});

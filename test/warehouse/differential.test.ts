// Issue #60, item 3 (the analysis on the source): the same events, ingested through Verdict and
// placed in a fact table on a PostgreSQL source, give the same per-variant totals (the analysis
// store contract's VariantTotals) whether the SQL store computes them from Verdict's events or the
// source computes them from the fact table with the experiment's exposures shipped to it: units,
// n and conversions exactly, sums and sums of squares to 1e-9 (relative). Binary, count, sum and
// mean, a capped sum, a row filter, two windows, events before the exposure and after the window,
// events without the number, and a stopped experiment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { HOUR, ManualClock } from '../analysis/support.js';
import { expectSameTotals, seedExperiment, T0, totalsBothWays } from './differential-support.js';
import { ALLOW_PRIVATE, createPostgresSource, type PostgresSource } from './sources.js';

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('warehouse analysis on PostgreSQL: the same totals as from Verdict’s own events', {}, ({ dialect }) => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: PostgresSource;
  let workspaceId: string;
  let experimentId: string;

  beforeAll(async () => {
    source = await createPostgresSource('CREATE TABLE events (unit_id text, occurred_at timestamptz, amount numeric, event_key text)');
    server = await startTestServer(dialect, { clock, config: { dataSources: ALLOW_PRIVATE } });
    let stored;
    ({ workspaceId, experimentId, stored } = await seedExperiment(server, clock));
    expect(stored.length).toBeGreaterThan(500);
    for (const event of stored) {
      const amount = (JSON.parse(event.properties) as { amount?: unknown }).amount;
      await source.admin.query("INSERT INTO events VALUES ($1, TIMESTAMPTZ 'epoch' + $2 * INTERVAL '1 millisecond', $3, $4)", [
        event.unit_id,
        Number(event.occurred_at),
        typeof amount === 'number' ? amount : null,
        event.event_key,
      ]);
    }
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  const both = (eventsBefore: number | null) =>
    totalsBothWays(server.ctx, { workspaceId, experimentId }, { kind: 'postgres', url: source.url, limits: ALLOW_PRIVATE }, eventsBefore);

  it('gives the same totals for every metric kind, window, cap and filter', async () => {
    const { fromEvents, fromSource } = await both(null);
    expect([...fromEvents.values()].reduce((units, variant) => units + variant.units, 0)).toBe(240);
    expect(fromEvents.get('control')?.metrics[2]?.sum).toBeGreaterThan(0);
    expectSameTotals(fromEvents, fromSource);
  });

  it('gives the same totals for a stopped experiment (events from the stop on are left out)', async () => {
    const { fromEvents, fromSource } = await both(T0 + 30 * HOUR);
    expectSameTotals(fromEvents, fromSource);
  });
});

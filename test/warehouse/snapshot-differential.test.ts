// Issue #60 (metrics on fact tables, snapshots through the analysis store seam): the same events,
// ingested through Verdict in one workspace and placed in a fact table on a PostgreSQL source read
// by a second, give the same snapshot through HTTP, for every metric kind (binary, count, sum,
// mean, ratio), absolute and percentile caps, a one-day window and CUPED: counts exactly, every
// other number to 1e-9. Verdict itself on SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, HOUR, ManualClock } from '../analysis/support.js';
import { ALLOW_PRIVATE, createPostgresSource, type PostgresSource } from './sources.js';
import { expectSameSnapshot, seedBoth, T0, type Seeded } from './snapshot-support.js';

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('snapshots of metrics on a PostgreSQL fact table: the same as from Verdict’s own events', {}, ({ dialect }) => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: PostgresSource;
  let seeded: Seeded;

  beforeAll(async () => {
    source = await createPostgresSource('CREATE TABLE events (unit_id text, occurred_at timestamptz, amount numeric, event_key text)');
    server = await startTestServer(dialect, { clock, config: { dataSources: ALLOW_PRIVATE } });
    seeded = await seedBoth(
      server,
      clock,
      async (stored) => {
        for (const event of stored) {
          const amount = (JSON.parse(event.properties) as { amount?: unknown }).amount;
          await source.admin.query("INSERT INTO events VALUES ($1, TIMESTAMPTZ 'epoch' + $2 * INTERVAL '1 millisecond', $3, $4)", [
            event.unit_id,
            Number(event.occurred_at),
            typeof amount === 'number' ? amount : null,
            event.event_key,
          ]);
        }
        return source.url;
      },
      'postgres',
    );
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  it('computes the same snapshot from the fact table as from the events', async () => {
    const fromEvents = await compute(server, seeded.events.boot.key, seeded.events.experimentId);
    const fromFacts = await compute(server, seeded.facts.boot.key, seeded.facts.experimentId);
    expect(fromFacts.computation.mode).toBe('full');
    expect(fromEvents.primary_metric.cuped).not.toBeNull();
    expect(fromEvents.primary_metric.cap_applied).toBeGreaterThan(0);
    expect(fromEvents.secondary_metrics).toHaveLength(3);
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

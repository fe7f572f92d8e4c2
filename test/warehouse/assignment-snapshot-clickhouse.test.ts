// Issue #60 item 4 on ClickHouse (the embedded engine): the same check as
// assignment-snapshot.test.ts, the units Verdict assigned and the events it stored placed in
// tables there. Verdict runs on SQLite (an embedded analysis engine would share the process's
// chdb session, which keeps readonly=1 once a source statement sets it); the tables are written
// before any read-only statement runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, HOUR, ManualClock } from '../analysis/support.js';
import { seedAssigned, type AssignedSeed } from './assignment-support.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from './sources.js';
import { expectSameSnapshot, T0 } from './snapshot-support.js';

// A snapshot runs several statements on the source: a loaded machine must not stop them.
const GENEROUS = { ...ALLOW_PRIVATE, statementTimeoutMs: 120_000 };

// Snapshots read the source and the store on a loaded machine: generous, never a race.
const SLOW = 240_000;

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

suite('analysis-only experiments on a ClickHouse assignment source (chdb): the same snapshot as Verdict’s own assignment', () => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: ChdbSource;
  let seeded: AssignedSeed;

  beforeAll(async () => {
    source = await createChdbSource([
      "CREATE TABLE assignments (user_id String, experiment String, variant String, seen_at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY user_id",
      "CREATE TABLE events (unit_id String, occurred_at DateTime64(3, 'UTC'), amount Nullable(Float64), event_key String) ENGINE = MergeTree ORDER BY unit_id",
    ]);
    server = await startTestServer('sqlite', { clock, config: { dataSources: GENEROUS } });
    seeded = await seedAssigned(
      server,
      clock,
      async ({ exposures, events }) => {
        const assignments = exposures.map((row) => ({
          user_id: row.unit_id,
          experiment: row.experiment_key,
          variant: row.variant_key,
          seen_at: at(row.exposed_at),
        }));
        await source.client.insert({ table: 'assignments', values: assignments, format: 'JSONEachRow' });
        const facts = events.map((event) => ({ unit_id: event.unit_id, occurred_at: at(event.occurred_at), amount: event.amount, event_key: event.event_key }));
        await source.client.insert({ table: 'events', values: facts, format: 'JSONEachRow' });
        return source.url;
      },
      'clickhouse',
    );
  }, 240_000);
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  }, SLOW);

  it(
    'computes the same snapshot from the assignment source as from Verdict’s assignment, on a fact table and on events',
    async () => {
      const reference = await compute(server, seeded.verdict.boot.key, seeded.verdict.experimentId);
      expect(seeded.movedUnits).toBeGreaterThan(0);
      expect(expectSameSnapshot(reference, await compute(server, seeded.onFacts.boot.key, seeded.onFacts.experimentId))).toBeGreaterThan(100);
      expect(expectSameSnapshot(reference, await compute(server, seeded.onEvents.boot.key, seeded.onEvents.experimentId))).toBeGreaterThan(100);
    },
    SLOW,
  );

  it(
    'computes the same snapshot once the experiments stopped',
    async () => {
      clock.set(T0 + 30 * HOUR);
      for (const side of [seeded.verdict, seeded.onFacts, seeded.onEvents]) {
        const stopped = await server.request('POST', `/v1/experiments/${side.experimentId}/stop`, { key: side.boot.key, body: { reason: 'inconclusive' } });
        expect(stopped.status, stopped.text).toBe(200);
      }
      const reference = await compute(server, seeded.verdict.boot.key, seeded.verdict.experimentId);
      expect(expectSameSnapshot(reference, await compute(server, seeded.onFacts.boot.key, seeded.onFacts.experimentId))).toBeGreaterThan(100);
      expect(expectSameSnapshot(reference, await compute(server, seeded.onEvents.boot.key, seeded.onEvents.experimentId))).toBeGreaterThan(100);
    },
    SLOW,
  );

  it(
    'summarizes the source per experiment key: units by the variant of their first exposure, and those seen in two',
    async () => {
      const summary = await server.request('POST', `/v1/assignment-sources/${seeded.onFacts.assignmentSourceId}/summary`, { key: seeded.onFacts.boot.key });
      expect(summary.status, summary.text).toBe(200);
      const [main, other] = summary.body.experiments;
      expect(main.experiment_key).toBe('warehouse-snapshot');
      expect(main.units).toBe(240);
      expect(main.units_in_several_variants).toBe(seeded.movedUnits);
      const reference = await compute(server, seeded.verdict.boot.key, seeded.verdict.experimentId);
      const byVariant = Object.fromEntries(reference.traffic.map((row: any) => [row.variant_key, row.exposed_units]));
      expect(Object.fromEntries(main.variants.map((row: any) => [row.variant_key, row.units]))).toEqual(byVariant);
      expect(other).toMatchObject({
        experiment_key: 'another-test',
        units: 30,
        variants: [{ variant_key: 'treatment', units: 30 }],
        units_in_several_variants: 0,
      });
    },
    SLOW,
  );
});

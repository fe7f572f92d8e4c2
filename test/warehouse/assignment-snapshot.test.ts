// Issue #60 item 4 on a PostgreSQL source: the units Verdict assigned, placed in an assignment
// table, give analysis-only experiments the same snapshot as the experiment Verdict assigned
// (metrics on a fact table computed on the source, and metrics on Verdict's own events), counts
// exactly and every other number to 1e-9, before and after the stop; and Verdict assigns no unit
// in such an experiment (assign, batch assign, OFREP, logged exposures). Verdict on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { compute, HOUR, ManualClock } from '../analysis/support.js';
import { seedAssigned, type AssignedSeed } from './assignment-support.js';
import { ALLOW_PRIVATE, createPostgresSource, type PostgresSource } from './sources.js';
import { EXPERIMENT_KEY, expectSameSnapshot, T0 } from './snapshot-support.js';

// A snapshot runs several statements on the source: a loaded machine must not stop them.
const GENEROUS = { ...ALLOW_PRIVATE, statementTimeoutMs: 120_000 };

// Snapshots read the source and the store on a loaded machine: generous, never a race.
const SLOW = 240_000;

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

const SETUP = `
  CREATE TABLE assignments (user_id text, experiment text, variant text, seen_at timestamptz);
  CREATE TABLE events (unit_id text, occurred_at timestamptz, amount numeric, event_key text);
`;

suite('analysis-only experiments on a PostgreSQL assignment source: the same snapshot as Verdict’s own assignment', {}, ({ dialect }) => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: PostgresSource;
  let seeded: AssignedSeed;

  beforeAll(async () => {
    source = await createPostgresSource(SETUP);
    server = await startTestServer(dialect, { clock, config: { dataSources: GENEROUS } });
    seeded = await seedAssigned(
      server,
      clock,
      async ({ exposures, events }) => {
        await source.admin.query(
          "INSERT INTO assignments SELECT u, e, v, TIMESTAMPTZ 'epoch' + t * INTERVAL '1 millisecond' FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS r(u, e, v, t)",
          [
            exposures.map((row) => row.unit_id),
            exposures.map((row) => row.experiment_key),
            exposures.map((row) => row.variant_key),
            exposures.map((row) => row.exposed_at),
          ],
        );
        await source.admin.query(
          "INSERT INTO events SELECT u, TIMESTAMPTZ 'epoch' + t * INTERVAL '1 millisecond', a, k FROM unnest($1::text[], $2::bigint[], $3::numeric[], $4::text[]) AS r(u, t, a, k)",
          [events.map((row) => row.unit_id), events.map((row) => row.occurred_at), events.map((row) => row.amount), events.map((row) => row.event_key)],
        );
        return source.url;
      },
      'postgres',
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
      const onFacts = await compute(server, seeded.onFacts.boot.key, seeded.onFacts.experimentId);
      const onEvents = await compute(server, seeded.onEvents.boot.key, seeded.onEvents.experimentId);
      expect(reference.primary_metric.cuped).not.toBeNull();
      expect(seeded.movedUnits).toBeGreaterThan(0);
      expect(expectSameSnapshot(reference, onFacts)).toBeGreaterThan(100);
      expect(expectSameSnapshot(reference, onEvents)).toBeGreaterThan(100);
    },
    SLOW,
  );

  it(
    'reads the source again at each snapshot: a unit moved there moves in the analysis, and the stop is kept',
    async () => {
      const moved = await source.admin.query<{ user_id: string }>(
        `UPDATE assignments SET variant = CASE variant WHEN 'control' THEN 'treatment' ELSE 'control' END
       WHERE experiment = $1 AND user_id = (SELECT min(user_id) FROM assignments WHERE experiment = $1) RETURNING user_id`,
        [EXPERIMENT_KEY],
      );
      expect(moved.rowCount).toBeGreaterThan(0);
      const after = await compute(server, seeded.onEvents.boot.key, seeded.onEvents.experimentId);
      const reference = await compute(server, seeded.verdict.boot.key, seeded.verdict.experimentId);
      const units = (snapshot: any) => Object.fromEntries(snapshot.traffic.map((variant: any) => [variant.variant_key, variant.exposed_units]));
      expect(Object.values(units(after)).reduce((a: number, b) => a + (b as number), 0)).toBe(240);
      expect(units(after)).not.toEqual(units(reference));
      // Put back, then stopped at the same time, the three agree again.
      await source.admin.query(
        `UPDATE assignments SET variant = CASE variant WHEN 'control' THEN 'treatment' ELSE 'control' END WHERE experiment = $1 AND user_id = $2`,
        [EXPERIMENT_KEY, moved.rows[0]?.user_id],
      );
      clock.set(T0 + 30 * HOUR);
      for (const side of [seeded.verdict, seeded.onFacts, seeded.onEvents]) {
        const stopped = await server.request('POST', `/v1/experiments/${side.experimentId}/stop`, { key: side.boot.key, body: { reason: 'inconclusive' } });
        expect(stopped.status, stopped.text).toBe(200);
      }
      const stoppedReference = await compute(server, seeded.verdict.boot.key, seeded.verdict.experimentId);
      expect(expectSameSnapshot(stoppedReference, await compute(server, seeded.onFacts.boot.key, seeded.onFacts.experimentId))).toBeGreaterThan(100);
      expect(expectSameSnapshot(stoppedReference, await compute(server, seeded.onEvents.boot.key, seeded.onEvents.experimentId))).toBeGreaterThan(100);
    },
    SLOW,
  );
});

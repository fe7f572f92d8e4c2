// Issue #60, incremental refreshes of metrics on a PostgreSQL fact table through HTTP: late rows
// inside the restatement window counted and equal to a full refresh (1e-9), rows outside it missed
// until a full refresh, new units read in full, only the window read (computation.warehouse), the
// same snapshot twice. Verdict itself on SQLite and on PostgreSQL; the source a database of its own.
import { afterAll, beforeAll, describe } from 'vitest';
import { ManualClock } from '../analysis/support.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { incrementalCases } from './incremental-cases.js';
import { defineExperiment, T0, type FactRow, type Scenario } from './incremental-support.js';
import { ALLOW_PRIVATE, createPostgresSource, type PostgresSource } from './sources.js';

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('incremental refreshes of metrics on a PostgreSQL fact table', {}, ({ dialect }) => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: PostgresSource;
  let scenario: Scenario;

  beforeAll(async () => {
    source = await createPostgresSource('CREATE TABLE facts (unit_id text NOT NULL, occurred_at timestamptz NOT NULL, amount numeric)');
    server = await startTestServer(dialect, { clock, config: { dataSources: ALLOW_PRIVATE } });
    const boot = await server.bootstrap('Warehouse');
    const experimentId = await defineExperiment(server, boot, 'postgres', source.url);
    const insert = async (rows: readonly FactRow[]) => {
      for (const row of rows)
        await source.admin.query("INSERT INTO facts VALUES ($1, TIMESTAMPTZ 'epoch' + $2 * INTERVAL '1 millisecond', $3)", [row.unit_id, row.at, row.amount]);
    };
    scenario = { server, clock, boot, experimentId, insert };
  }, 240_000);
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  }, 120_000);

  incrementalCases(() => scenario);
});

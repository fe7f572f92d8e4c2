// Issue #60, incremental refreshes of metrics on a ClickHouse fact table (the embedded engine)
// through HTTP: the cases of incremental-cases.ts. Once Verdict's readonly=1 has run, nothing in
// this process can write through the engine, so the fact table is a File(TSV) table whose file
// the test appends to, as a pipeline would add rows; the engine reads the file at every query.
import fs from 'node:fs';
import { afterAll, beforeAll, describe } from 'vitest';
import { ManualClock } from '../analysis/support.js';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { incrementalCases } from './incremental-cases.js';
import { defineExperiment, T0, type FactRow, type Scenario } from './incremental-support.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from './sources.js';

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

const tsv = (row: FactRow) =>
  `${row.unit_id}\t${new Date(row.at).toISOString().replace('T', ' ').replace('Z', '')}\t${row.amount === null ? '\\N' : row.amount}\n`;

suite('incremental refreshes of metrics on a ClickHouse fact table (chdb)', () => {
  const clock = new ManualClock(T0);
  let server: TestServer;
  let source: ChdbSource;
  let scenario: Scenario;

  beforeAll(async () => {
    source = await createChdbSource(["CREATE TABLE facts (unit_id String, occurred_at DateTime64(3, 'UTC'), amount Nullable(Float64)) ENGINE = File(TSV)"]);
    const answer = await source.client.query({ query: "SELECT data_paths FROM system.tables WHERE name = 'facts'", format: 'JSONEachRow' });
    const file = ((await answer.json()) as Array<{ data_paths: string[] }>)[0]?.data_paths[0] as string;
    fs.writeFileSync(file, '');
    server = await startTestServer('sqlite', { clock, config: { dataSources: ALLOW_PRIVATE } });
    const boot = await server.bootstrap('Warehouse');
    const experimentId = await defineExperiment(server, boot, 'clickhouse', source.url);
    const insert = async (rows: readonly FactRow[]) => fs.appendFileSync(file, rows.map(tsv).join(''));
    scenario = { server, clock, boot, experimentId, insert };
  }, 240_000);
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  }, 120_000);

  incrementalCases(() => scenario);
});

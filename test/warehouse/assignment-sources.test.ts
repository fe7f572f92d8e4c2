// Issue #60 item 4 through the API, on a PostgreSQL source: an assignment source is one read-only
// SELECT described without reading rows, with the four columns the user names (422s naming the
// field, and anything else refused with the source left as it was); changes are audit-logged;
// it cannot be deleted while an experiment reads it. An experiment created with it is
// analysis-only: no assign, batch assign, OFREP evaluation or logged exposure places a unit in it.
// The source's credentials appear in no answer, log line or audit entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type Bootstrap, type TestServer } from '../support/server.js';
import { createExperiment, TWO_ARMS } from '../analysis/support.js';
import { ALLOW_PRIVATE, createPostgresSource, everythingShown, SOURCE_PASSWORD, type PostgresSource } from './sources.js';

const SETUP = `
  CREATE TABLE assignments (user_id text NOT NULL, experiment text NOT NULL, variant text NOT NULL, seen_at timestamptz NOT NULL, note text);
  INSERT INTO assignments VALUES ('u1', 'checkout', 'control', '2026-01-01T10:00:00Z', null), ('u2', 'checkout', 'treatment', '2026-01-01T11:00:00Z', 'x');
  CREATE FUNCTION record_exposure() RETURNS int LANGUAGE sql VOLATILE AS $$ INSERT INTO assignments VALUES ('x', 'checkout', 'control', now(), null) RETURNING 1 $$;
`;
const SQL = 'SELECT user_id, experiment, variant, seen_at, note FROM assignments';
const COLUMNS = { unit_id_column: 'user_id', experiment_key_column: 'experiment', variant_key_column: 'variant', timestamp_column: 'seen_at' };

// Snapshots read the source and the store on a loaded machine: generous, never a race.
const SLOW = 240_000;

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('assignment sources on PostgreSQL and analysis-only experiments', {}, ({ dialect }) => {
  let server: TestServer;
  let source: PostgresSource;
  let boot: Bootstrap;
  let dataSourceId: string;
  const lines: string[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    source = await createPostgresSource(SETUP);
    server = await startTestServer(dialect, { config: { dataSources: ALLOW_PRIVATE }, logLines: lines });
    boot = await server.bootstrap();
    const created = await call('POST', '/v1/data-sources', { name: 'Warehouse', kind: 'postgres', url: source.url });
    expect(created.status, created.text).toBe(201);
    dataSourceId = created.body.id;
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  }, SLOW);

  async function call(method: string, path: string, body?: unknown) {
    const response = await server.request(method, path, { key: boot.key, ...(body === undefined ? {} : { body }) });
    answers.push(response.text);
    return response;
  }

  async function sourceState() {
    const rows = await source.admin.query<{ n: string }>('SELECT count(*) AS n FROM assignments');
    const tables = await source.admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    return { rows: rows.rows[0]?.n, tables: tables.rows[0]?.n };
  }

  it(
    'creates an assignment source with its described columns, reads, lists and summarizes it',
    async () => {
      const created = await call('POST', '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'Exposures', sql: `${SQL};`, ...COLUMNS });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({ sql: SQL, ...COLUMNS, data_source_id: dataSourceId });
      expect(created.body.columns.map((column: { name: string; kind: string }) => [column.name, column.kind])).toEqual([
        ['user_id', 'string'],
        ['experiment', 'string'],
        ['variant', 'string'],
        ['seen_at', 'timestamp'],
        ['note', 'string'],
      ]);
      expect((await call('GET', `/v1/assignment-sources/${created.body.id}`)).body.id).toBe(created.body.id);
      const listed = await call('GET', `/v1/assignment-sources?data_source_id=${dataSourceId}`);
      expect(listed.body.data.map((row: { id: string }) => row.id)).toContain(created.body.id);
      const summary = await call('POST', `/v1/assignment-sources/${created.body.id}/summary`);
      expect(summary.status, summary.text).toBe(200);
      expect(summary.body.experiments).toEqual([
        {
          experiment_key: 'checkout',
          units: 2,
          variants: [
            { variant_key: 'control', units: 1 },
            { variant_key: 'treatment', units: 1 },
          ],
          units_in_several_variants: 0,
          first_timestamp: expect.stringContaining('2026-01-01'),
          last_timestamp: expect.stringContaining('2026-01-01'),
        },
      ]);
      const audit = await call('GET', '/v1/audit?limit=50');
      expect(audit.body.data.map((entry: { action: string }) => entry.action)).toContain('assignment_source.created');
    },
    SLOW,
  );

  it(
    'answers 422 naming each column that is not one the SQL returns, or a time that is not a timestamp, and an unknown data source',
    async () => {
      const wrong = await call('POST', '/v1/assignment-sources', {
        data_source_id: dataSourceId,
        name: 'Wrong',
        sql: SQL,
        ...COLUMNS,
        unit_id_column: 'uid',
        variant_key_column: 'arm',
        timestamp_column: 'note',
      });
      expect(wrong.status, wrong.text).toBe(422);
      expect(wrong.headers.get('content-type')).toContain('application/problem+json');
      expect(wrong.body.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual([
        '/timestamp_column',
        '/unit_id_column',
        '/variant_key_column',
      ]);
      const noSource = await call('POST', '/v1/assignment-sources', { data_source_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', name: 'Lost', sql: SQL, ...COLUMNS });
      expect(noSource.status).toBe(422);
      expect(noSource.body.errors[0].pointer).toBe('/data_source_id');
      const missing = await call('POST', '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'Half', sql: SQL, unit_id_column: 'user_id' });
      expect(missing.status).toBe(422);
      const listed = await call('GET', '/v1/assignment-sources');
      expect(listed.body.data.map((row: { name: string }) => row.name)).not.toContain('Wrong');
    },
    SLOW,
  );

  it(
    'refuses anything but one read-only SELECT (a write, two statements, FOR UPDATE, a side effect), and the source is left as it was',
    async () => {
      const before = await sourceState();
      const refused = [
        'DELETE FROM assignments RETURNING user_id, experiment, variant, seen_at',
        `${SQL}; DROP TABLE assignments`,
        `${SQL} FOR UPDATE`,
        'WITH gone AS (DELETE FROM assignments RETURNING *) SELECT user_id, experiment, variant, seen_at FROM gone',
      ];
      for (const sql of refused) {
        const answer = await call('POST', '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'Bad', sql, ...COLUMNS });
        expect(answer.status, `${sql}: ${answer.text}`).toBe(422);
        expect(answer.body.errors[0].pointer).toBe('/sql');
      }
      expect(await sourceState()).toEqual(before);
      // A function with side effects is only found out when it runs: the read-only transaction refuses it.
      const sneaky = await call('POST', '/v1/assignment-sources', {
        data_source_id: dataSourceId,
        name: 'Sneaky',
        sql: 'SELECT user_id, experiment, variant, seen_at, record_exposure() AS n FROM assignments',
        ...COLUMNS,
      });
      expect(sneaky.status, sneaky.text).toBe(201);
      const summary = await call('POST', `/v1/assignment-sources/${sneaky.body.id}/summary`);
      expect(summary.status, summary.text).toBe(422);
      expect(summary.body.errors[0].message).toContain('read-only transaction');
      expect(await sourceState()).toEqual(before);
      expect((await call('DELETE', `/v1/assignment-sources/${sneaky.body.id}`)).status).toBe(204);
    },
    SLOW,
  );

  it(
    'makes an analysis-only experiment that Verdict never assigns (assign, batch, OFREP, logged exposures)',
    async () => {
      const assignmentSource = await call('POST', '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'For checkout', sql: SQL, ...COLUMNS });
      const experiment = await createExperiment(server, boot.key, {
        environment_id: boot.environmentId,
        key: 'checkout-v2',
        variants: TWO_ARMS,
        assignment_source_id: assignmentSource.body.id,
        assignment_experiment_key: 'checkout',
      });
      expect(experiment).toMatchObject({ status: 'running', assignment_source_id: assignmentSource.body.id, assignment_experiment_key: 'checkout' });
      const assign = await call('POST', '/v1/assign', { experiment_key: 'checkout-v2', unit_id: 'u1' });
      expect(assign.status).toBe(404);
      expect(assign.headers.get('content-type')).toContain('application/problem+json');
      expect(assign.body.detail).toContain('assigned elsewhere');
      const batch = await call('POST', '/v1/assign/batch', { experiments: ['checkout-v2'], unit_id: 'u1' });
      expect(batch.status, batch.text).toBe(200);
      expect(batch.body.not_found).toEqual(['checkout-v2']);
      const flag = await call('POST', '/ofrep/v1/evaluate/flags/checkout-v2', { context: { targetingKey: 'u1' } });
      expect(flag.status).toBe(404);
      expect(flag.body.errorCode).toBe('FLAG_NOT_FOUND');
      const flags = await call('POST', '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u1' } });
      expect(flags.body.flags.map((item: { key: string }) => item.key)).not.toContain('checkout-v2');
      const exposure = await call('POST', '/v1/exposures', { experiment_key: 'checkout-v2', unit_id: 'u1', variant: 'control' });
      expect(exposure.status).toBe(404);
      const stored = await server.ctx.db.selectFrom('exposures').select('id').where('experiment_id', '=', experiment.id).execute();
      expect(stored).toEqual([]);
      // Its snapshot reads the source: u1 in control, u2 in treatment.
      const snapshot = await call('POST', `/v1/experiments/${experiment.id}/results/compute`);
      expect(snapshot.status, snapshot.text).toBe(201);
      expect(snapshot.body.traffic.map((row: { variant_key: string; exposed_units: number }) => [row.variant_key, row.exposed_units])).toEqual([
        ['control', 1],
        ['treatment', 1],
      ]);
      const deleted = await call('DELETE', `/v1/assignment-sources/${assignmentSource.body.id}`);
      expect(deleted.status).toBe(409);
      expect(deleted.body.type).toBe('https://verdict.dev/problems/assignment-source-in-use');
      expect(deleted.body.referrers).toEqual([{ type: 'experiment', id: experiment.id, key: 'checkout-v2' }]);
      const sourceDeleted = await call('DELETE', `/v1/data-sources/${dataSourceId}`);
      expect(sourceDeleted.status).toBe(409);
    },
    SLOW,
  );

  it(
    'answers 422 for an experiment naming an unknown assignment source, a source key alone, or a bandit assigned elsewhere',
    async () => {
      const base = { name: 'Elsewhere', hypothesis: 'h', unit_type: 'user', environment_id: boot.environmentId, variants: TWO_ARMS };
      const unknown = await call('POST', '/v1/experiments', { ...base, key: 'e-unknown', assignment_source_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
      expect(unknown.status).toBe(422);
      expect(unknown.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/assignment_source_id']);
      const keyAlone = await call('POST', '/v1/experiments', { ...base, key: 'e-key', assignment_experiment_key: 'checkout' });
      expect(keyAlone.status).toBe(422);
      expect(keyAlone.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/assignment_experiment_key']);
    },
    SLOW,
  );

  it(
    'patches (described again when the SQL or a column changes), audit-logs, and deletes when nothing reads it',
    async () => {
      const created = await call('POST', '/v1/assignment-sources', { data_source_id: dataSourceId, name: 'Patched', sql: SQL, ...COLUMNS });
      const renamed = await call('PATCH', `/v1/assignment-sources/${created.body.id}`, { name: 'Renamed' });
      expect(renamed.status, renamed.text).toBe(200);
      expect(renamed.body.name).toBe('Renamed');
      const badColumn = await call('PATCH', `/v1/assignment-sources/${created.body.id}`, { variant_key_column: 'arm' });
      expect(badColumn.status).toBe(422);
      expect(badColumn.body.errors[0].pointer).toBe('/variant_key_column');
      const narrowed = await call('PATCH', `/v1/assignment-sources/${created.body.id}`, {
        sql: 'SELECT user_id, experiment, variant, seen_at FROM assignments',
      });
      expect(narrowed.status, narrowed.text).toBe(200);
      expect(narrowed.body.columns.map((column: { name: string }) => column.name)).toEqual(['user_id', 'experiment', 'variant', 'seen_at']);
      const deleted = await call('DELETE', `/v1/assignment-sources/${created.body.id}`);
      expect(deleted.status).toBe(204);
      expect((await call('GET', `/v1/assignment-sources/${created.body.id}`)).status).toBe(404);
      const audit = await call('GET', `/v1/audit?limit=200`);
      const actions = audit.body.data
        .filter((entry: { target_id: string }) => entry.target_id === created.body.id)
        .map((entry: { action: string }) => entry.action);
      expect(actions.sort()).toEqual(['assignment_source.created', 'assignment_source.deleted', 'assignment_source.updated', 'assignment_source.updated']);
    },
    SLOW,
  );

  it(
    'never shows the source’s credentials: not in answers, the audit log or the log',
    async () => {
      expect(await everythingShown(server, boot.key, lines, answers.slice(1))).not.toContain(SOURCE_PASSWORD);
    },
    SLOW,
  );
});

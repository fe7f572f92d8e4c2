// Issue #60, items 1 and 2 on a PostgreSQL source: a data source's URL is sealed and never shown
// again (answers, log, audit), its host is checked against the outbound network rule at creation
// and at every connection, and a fact table is one read-only SELECT described without reading
// rows; anything else is refused and the source is left as it was; a slow query stops at the
// statement timeout with a clear problem.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ALLOW_PRIVATE, createPostgresSource, everythingShown, SOURCE_PASSWORD, type PostgresSource } from './sources.js';

const SETUP = `
  CREATE TABLE purchases (user_id text NOT NULL, purchased_at timestamptz NOT NULL, amount numeric NOT NULL, country text);
  INSERT INTO purchases VALUES ('u1', '2026-01-01T10:00:00Z', 10.5, 'FR'), ('u1', '2026-01-02T10:00:00Z', 4, 'FR'), ('u2', '2026-01-03T10:00:00Z', 7.25, 'DE');
  CREATE SEQUENCE orders_seq;
  CREATE FUNCTION record_visit() RETURNS int LANGUAGE sql VOLATILE AS $$ INSERT INTO purchases VALUES ('x', now(), 0, null) RETURNING 1 $$;
`;
const FACTS = 'SELECT user_id, purchased_at, amount, country FROM purchases';

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('warehouse sources on PostgreSQL: sealed URLs, read-only fact tables', {}, ({ dialect }) => {
  let server: TestServer;
  let source: PostgresSource;
  let key: string;
  const lines: string[] = [];
  const answers: string[] = [];

  beforeAll(async () => {
    source = await createPostgresSource(SETUP);
    server = await startTestServer(dialect, { config: { dataSources: ALLOW_PRIVATE }, logLines: lines });
    key = (await server.bootstrap()).key;
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  async function call(method: string, path: string, body?: unknown, as = key) {
    const response = await server.request(method, path, { key: as, ...(body === undefined ? {} : { body }) });
    answers.push(response.text);
    return response;
  }

  async function createSource(name = 'Replica') {
    const created = await call('POST', '/v1/data-sources', { name, kind: 'postgres', url: source.url });
    expect(created.status, created.text).toBe(201);
    return created.body as { id: string; url: string };
  }

  async function sourceState() {
    const rows = await source.admin.query<{ n: string; total: string }>('SELECT count(*) AS n, sum(amount) AS total FROM purchases');
    const sequence = await source.admin.query<{ last_value: string; is_called: boolean }>('SELECT last_value, is_called FROM orders_seq');
    const tables = await source.admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'");
    return { rows: rows.rows[0], sequence: sequence.rows[0], tables: tables.rows[0] };
  }

  it('creates a source, shows its URL whole only in that answer, and tests it (the server version)', async () => {
    const created = await createSource();
    expect(created.url).toBe(source.url);
    const read = await call('GET', `/v1/data-sources/${created.id}`);
    expect(read.body.url).toMatch(/^postgres:\/\/postgres:…@127\.0\.0\.1:5432\/verdict_wh_/);
    expect(read.text).not.toContain(SOURCE_PASSWORD);
    const list = await call('GET', '/v1/data-sources');
    expect(list.body.data.map((row: { id: string }) => row.id)).toContain(created.id);
    const tested = await call('POST', `/v1/data-sources/${created.id}/test`);
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, error: null });
    expect(tested.body.server_version).toMatch(/^\d+(\.\d+)?/);
  });

  it('describes a fact table’s columns without reading rows, and summarizes it with aggregates computed there', async () => {
    const { id } = await createSource('Described');
    const body = { data_source_id: id, name: 'Purchases', sql: `${FACTS};`, unit_id_column: 'user_id', timestamp_column: 'purchased_at' };
    const created = await call('POST', '/v1/fact-tables', body);
    expect(created.status, created.text).toBe(201);
    expect(created.body.sql).toBe(FACTS);
    expect(created.body.columns).toEqual([
      { name: 'user_id', type: 'text', kind: 'string' },
      { name: 'purchased_at', type: 'timestamp with time zone', kind: 'timestamp' },
      { name: 'amount', type: 'numeric', kind: 'number' },
      { name: 'country', type: 'text', kind: 'string' },
    ]);
    const summary = await call('POST', `/v1/fact-tables/${created.body.id}/summary`);
    expect(summary.status, summary.text).toBe(200);
    expect(summary.body).toMatchObject({ rows: 3, units: 2 });
    expect(summary.body.first_timestamp).toMatch(/^2026-01-01/);
    const wrongColumns = await call('POST', '/v1/fact-tables', { ...body, unit_id_column: 'uid', timestamp_column: 'amount' });
    expect(wrongColumns.status).toBe(422);
    expect(wrongColumns.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/unit_id_column', '/timestamp_column']);
    const missing = await call('POST', '/v1/fact-tables', { ...body, sql: 'SELECT user_id, purchased_at FROM no_such_table' });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0]).toMatchObject({ pointer: '/sql' });
    expect(missing.body.errors[0].message).toContain('no_such_table');
  });

  it('refuses anything but one read-only SELECT, and nothing in the source changes', async () => {
    const { id } = await createSource('Guarded');
    const before = await sourceState();
    const refused = [
      'DELETE FROM purchases',
      `${FACTS}; DELETE FROM purchases`,
      `${FACTS} FOR UPDATE`,
      "SELECT user_id, purchased_at, nextval('orders_seq') AS n FROM purchases",
      "SELECT user_id, purchased_at, setval('orders_seq', 99) AS n FROM purchases",
      'SELECT user_id, purchased_at, pg_sleep(5) AS s FROM purchases',
      'WITH gone AS (DELETE FROM purchases RETURNING *) SELECT user_id, purchased_at FROM gone',
      'SELECT user_id, purchased_at INTO copied FROM purchases',
      'DROP TABLE purchases',
    ];
    for (const sql of refused) {
      const response = await call('POST', '/v1/fact-tables', {
        data_source_id: id,
        name: 'Bad',
        sql,
        unit_id_column: 'user_id',
        timestamp_column: 'purchased_at',
      });
      expect(response.status, `${sql}: ${response.text}`).toBe(422);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(response.body.errors[0].pointer).toBe('/sql');
    }
    // A function the parser cannot know: the READ ONLY transaction refuses its write when a query runs it.
    const sneaky = await call('POST', '/v1/fact-tables', {
      data_source_id: id,
      name: 'Sneaky',
      sql: 'SELECT user_id, purchased_at, record_visit() AS visit FROM purchases',
      unit_id_column: 'user_id',
      timestamp_column: 'purchased_at',
    });
    expect(sneaky.status, sneaky.text).toBe(201);
    const summary = await call('POST', `/v1/fact-tables/${sneaky.body.id}/summary`);
    expect(summary.status, summary.text).toBe(422);
    expect(summary.body.errors[0].message).toContain('read-only transaction');
    expect(await sourceState()).toEqual(before);
    const list = await call('GET', `/v1/fact-tables?data_source_id=${id}`);
    expect(list.body.data.map((table: { name: string }) => table.name)).toEqual(['Sneaky']);
  });

  it('stops a slow query at the statement timeout with a clear problem, describing included', async () => {
    const { id } = await createSource('Slow');
    const slowSql = 'SELECT a::text AS user_id, now() AS at FROM generate_series(1, 200000000) a';
    const slow = await call('POST', '/v1/fact-tables', { data_source_id: id, name: 'Slow', sql: slowSql, unit_id_column: 'user_id', timestamp_column: 'at' });
    expect(slow.status, slow.text).toBe(201);
    const started = Date.now();
    const summary = await call('POST', `/v1/fact-tables/${slow.body.id}/summary`);
    expect(summary.status, summary.text).toBe(504);
    expect(summary.body).toMatchObject({ type: 'https://verdict.dev/problems/data-source-timeout' });
    expect(summary.body.detail).toContain('1500 ms');
    expect(Date.now() - started).toBeLessThan(15_000);
    // A table locked by someone else: describing it waits for the lock, and stops at the timeout too.
    const locker = new pg.Client({ connectionString: source.url });
    await locker.connect();
    try {
      await locker.query('BEGIN; LOCK TABLE purchases IN ACCESS EXCLUSIVE MODE');
      const blocked = await call('POST', '/v1/fact-tables', {
        data_source_id: id,
        name: 'Blocked',
        sql: FACTS,
        unit_id_column: 'user_id',
        timestamp_column: 'purchased_at',
      });
      expect(blocked.status, blocked.text).toBe(504);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
  });

  it('refuses private hosts unless VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS=1, at creation and at connection', async () => {
    const { id } = await createSource('Allowed here');
    const created = await call('POST', '/v1/fact-tables', {
      data_source_id: id,
      name: 'Facts',
      sql: FACTS,
      unit_id_column: 'user_id',
      timestamp_column: 'purchased_at',
    });
    expect(created.status).toBe(201);
    const strict = await startTestServer(dialect, {
      database: server.database,
      config: { dataSources: { ...ALLOW_PRIVATE, allowPrivateNetworks: false } },
      logLines: lines,
    });
    try {
      for (const url of [source.url, source.url.replace('127.0.0.1', 'localhost'), source.url.replace('127.0.0.1', '[::ffff:127.0.0.1]')]) {
        const refused = await strict.request('POST', '/v1/data-sources', { key, body: { name: 'Loopback', kind: 'postgres', url } });
        answers.push(refused.text);
        expect(refused.status, refused.text).toBe(422);
        expect(refused.body.errors[0].pointer).toBe('/url');
        expect(refused.body.errors[0].message).toContain('VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS');
      }
      const tested = await strict.request('POST', `/v1/data-sources/${id}/test`, { key });
      answers.push(tested.text);
      expect(tested.body).toMatchObject({ ok: false, server_version: null });
      expect(tested.body.error).toContain('VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS');
      const summary = await strict.request('POST', `/v1/fact-tables/${created.body.id}/summary`, { key });
      answers.push(summary.text);
      expect(summary.status, summary.text).toBe(502);
    } finally {
      await strict.close();
    }
  });

  it('refuses URLs it cannot read safely without quoting them, keeps sources to their workspace, and deletes in order', async () => {
    for (const url of [
      `${source.url}?host=/var/run/postgresql`,
      `${source.url}?sslrootcert=/etc/passwd`,
      `mysql://postgres:${SOURCE_PASSWORD}@db.example.com/x`,
      `postgres://postgres:${SOURCE_PASSWORD}@db.example.com`,
    ]) {
      const refused = await call('POST', '/v1/data-sources', { name: 'Bad', kind: 'postgres', url });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.errors[0].pointer).toBe('/url');
    }
    const { id } = await createSource('Owned');
    const other = (await server.bootstrap('Other')).key;
    expect((await call('GET', `/v1/data-sources/${id}`, undefined, other)).status).toBe(404);
    expect((await call('POST', `/v1/data-sources/${id}/test`, undefined, other)).status).toBe(404);
    const foreign = await call(
      'POST',
      '/v1/fact-tables',
      { data_source_id: id, name: 'X', sql: FACTS, unit_id_column: 'user_id', timestamp_column: 'purchased_at' },
      other,
    );
    expect(foreign.status).toBe(422);
    const table = await call('POST', '/v1/fact-tables', {
      data_source_id: id,
      name: 'Facts',
      sql: FACTS,
      unit_id_column: 'user_id',
      timestamp_column: 'purchased_at',
    });
    const inUse = await call('DELETE', `/v1/data-sources/${id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.referrers).toEqual([{ id: table.body.id, name: 'Facts' }]);
    const renamed = await call('PATCH', `/v1/data-sources/${id}`, { name: 'Renamed', url: (await call('GET', `/v1/data-sources/${id}`)).body.url });
    expect(renamed.body).toMatchObject({ name: 'Renamed' });
    expect(renamed.body.url).not.toContain(SOURCE_PASSWORD);
    expect((await call('DELETE', `/v1/fact-tables/${table.body.id}`)).status).toBe(204);
    expect((await call('DELETE', `/v1/data-sources/${id}`)).status).toBe(204);
  });

  it('never shows the credentials: not in any answer, the audit log or the log', async () => {
    const audit = await call('GET', '/v1/audit?target_type=data_source&limit=200');
    const actions = new Set(audit.body.data.map((entry: { action: string }) => entry.action));
    expect([...actions].sort()).toEqual(['data_source.created', 'data_source.deleted', 'data_source.tested', 'data_source.updated']);
    const shown = await everythingShown(
      server,
      key,
      lines,
      answers.filter((text) => !text.includes(`"url":"${source.url}"`)),
    );
    expect(lines.length).toBeGreaterThan(0);
    expect(shown).not.toContain(SOURCE_PASSWORD);
  });
});

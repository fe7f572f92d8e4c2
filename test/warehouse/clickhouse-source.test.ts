// Issue #60, items 1 and 2 on a ClickHouse source (the embedded engine, chdb:PATH): the source
// answers its version, a fact table is described with DESCRIBE under readonly=1, anything but one
// read-only SELECT is refused and nothing changes there, and a slow query stops at
// max_execution_time with a clear problem.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbAvailable } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ALLOW_PRIVATE, countOf, createChdbSource, type ChdbSource } from './sources.js';

const FACTS = 'SELECT user_id, purchased_at, amount, country FROM purchases';

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

suite('warehouse sources on ClickHouse (chdb): read-only fact tables', () => {
  let server: TestServer;
  let source: ChdbSource;
  let key: string;
  let sourceId: string;

  beforeAll(async () => {
    source = await createChdbSource([
      "CREATE TABLE purchases (user_id String, purchased_at DateTime64(3, 'UTC'), amount Float64, country Nullable(String)) ENGINE = MergeTree ORDER BY user_id",
      "INSERT INTO purchases VALUES ('u1', '2026-01-01 10:00:00', 10.5, 'FR'), ('u1', '2026-01-02 10:00:00', 4, 'FR'), ('u2', '2026-01-03 10:00:00', 7.25, NULL)",
    ]);
    server = await startTestServer('sqlite', { config: { dataSources: ALLOW_PRIVATE } });
    key = (await server.bootstrap()).key;
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  const create = (sql: string) =>
    server.request('POST', '/v1/fact-tables', {
      key,
      body: { data_source_id: sourceId, name: 'Purchases', sql, unit_id_column: 'user_id', timestamp_column: 'purchased_at' },
    });

  it('refuses the embedded engine unless private networks are allowed: it runs on this machine', async () => {
    const strict = await startTestServer('sqlite', { database: server.database, config: { dataSources: { ...ALLOW_PRIVATE, allowPrivateNetworks: false } } });
    try {
      const refused = await strict.request('POST', '/v1/data-sources', { key, body: { name: 'Local', kind: 'clickhouse', url: source.url } });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.errors[0].message).toContain('VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS');
    } finally {
      await strict.close();
    }
  });

  it('refuses a ClickHouse server on a private address at connection, by IP and by name', async () => {
    const strict = await startTestServer('sqlite', { database: server.database, config: { dataSources: { ...ALLOW_PRIVATE, allowPrivateNetworks: false } } });
    try {
      for (const url of ['http://default:Pa55word@127.0.0.1:1/db', 'http://default:Pa55word@localhost:1/db']) {
        const created = await server.request('POST', '/v1/data-sources', { key, body: { name: 'Private', kind: 'clickhouse', url } });
        expect(created.status, created.text).toBe(201);
        const tested = await strict.request('POST', `/v1/data-sources/${created.body.id}/test`, { key });
        expect(tested.body, url).toMatchObject({ ok: false, server_version: null });
        expect(tested.body.error, url).toContain('VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS');
        expect(tested.text).not.toContain('Pa55word');
        // Allowed, the connection is attempted (and fails: nothing listens on port 1).
        const allowed = await server.request('POST', `/v1/data-sources/${created.body.id}/test`, { key });
        expect(allowed.body.ok).toBe(false);
        expect(allowed.body.error).not.toContain('VERDICT_DATA_SOURCE_ALLOW_PRIVATE_NETWORKS');
        expect(allowed.text).not.toContain('Pa55word');
        expect((await server.request('DELETE', `/v1/data-sources/${created.body.id}`, { key })).status).toBe(204);
      }
    } finally {
      await strict.close();
    }
  });

  it('creates the source and tests it (the server version)', async () => {
    const created = await server.request('POST', '/v1/data-sources', { key, body: { name: 'Events', kind: 'clickhouse', url: source.url } });
    expect(created.status, created.text).toBe(201);
    sourceId = created.body.id;
    const tested = await server.request('POST', `/v1/data-sources/${sourceId}/test`, { key });
    expect(tested.body).toMatchObject({ ok: true, error: null });
    expect(tested.body.server_version).toMatch(/^\d+\.\d+/);
  });

  it('describes a fact table’s columns and summarizes it with aggregates computed there', async () => {
    const created = await create(FACTS);
    expect(created.status, created.text).toBe(201);
    expect(created.body.columns).toEqual([
      { name: 'user_id', type: 'String', kind: 'string' },
      { name: 'purchased_at', type: "DateTime64(3, 'UTC')", kind: 'timestamp' },
      { name: 'amount', type: 'Float64', kind: 'number' },
      { name: 'country', type: 'Nullable(String)', kind: 'string' },
    ]);
    const summary = await server.request('POST', `/v1/fact-tables/${created.body.id}/summary`, { key });
    expect(summary.status, summary.text).toBe(200);
    expect(summary.body).toMatchObject({ rows: 3, units: 2 });
    expect(summary.body.first_timestamp).toMatch(/^2026-01-01 10:00:00/);
  });

  it('refuses anything but one read-only SELECT, and nothing in the source changes', async () => {
    const before = await countOf(source.client, 'SELECT count() AS c FROM purchases');
    const tables = await countOf(source.client, 'SELECT count() AS c FROM system.tables WHERE database = currentDatabase()');
    for (const sql of [
      'DELETE FROM purchases WHERE 1',
      `${FACTS}; DROP TABLE purchases`,
      `${FACTS} FOR UPDATE`,
      "INSERT INTO purchases SELECT 'x', now(), 1, NULL",
      "SELECT user_id, purchased_at FROM url('http://169.254.169.254/latest', 'CSV', 'x String')",
      "SELECT user_id, purchased_at FROM file('/etc/passwd', 'CSV', 'x String')",
      'SELECT user_id, purchased_at, sleep(3) AS s FROM purchases',
    ]) {
      const response = await create(sql);
      expect(response.status, `${sql}: ${response.text}`).toBe(422);
      expect(response.body.errors[0].pointer).toBe('/sql');
    }
    expect(await countOf(source.client, 'SELECT count() AS c FROM purchases')).toBe(before);
    expect(await countOf(source.client, 'SELECT count() AS c FROM system.tables WHERE database = currentDatabase()')).toBe(tables);
  });

  it('stops a slow query at max_execution_time with a clear problem', async () => {
    const created = await server.request('POST', '/v1/fact-tables', {
      key,
      body: {
        data_source_id: sourceId,
        name: 'Slow',
        sql: 'SELECT toString(number) AS user_id, now() AS at FROM numbers(100000000000)',
        unit_id_column: 'user_id',
        timestamp_column: 'at',
      },
    });
    expect(created.status, created.text).toBe(201);
    const started = Date.now();
    const summary = await server.request('POST', `/v1/fact-tables/${created.body.id}/summary`, { key });
    expect(summary.status, summary.text).toBe(504);
    expect(summary.body.detail).toContain('1500 ms');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

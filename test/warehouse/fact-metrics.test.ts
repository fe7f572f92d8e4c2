// Issue #60, metrics on fact tables through /v1/metrics: {fact_table_id, column?, filter?} in place
// of event_key and property_path, checked against the fact table (a column among its described
// ones, a number for sum and mean) and the filter against the source (one read-only boolean
// expression it accepts), each refusal a 422 naming the field; the change is audit-logged; a fact
// table a metric reads cannot be deleted. Verdict on SQLite and PostgreSQL, the source a database
// of its own on the test run's PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ALLOW_PRIVATE, createPostgresSource, type PostgresSource } from './sources.js';

const SETUP = `
  CREATE TABLE purchases (user_id text NOT NULL, purchased_at timestamptz NOT NULL, amount numeric NOT NULL, country text);
  INSERT INTO purchases VALUES ('u1', '2026-01-01T10:00:00Z', 10.5, 'FR'), ('u2', '2026-01-03T10:00:00Z', 7.25, 'DE');
  CREATE SEQUENCE orders_seq;
`;

const suite = process.env.VERDICT_TEST_DATABASE_URL
  ? describeEach
  : (name: string) => describe.skip(`${name} (VERDICT_TEST_DATABASE_URL is not set)`, () => undefined);

suite('metrics on fact tables through /v1/metrics', {}, ({ dialect }) => {
  let server: TestServer;
  let source: PostgresSource;
  let key: string;
  let otherKey: string;
  let factTableId: string;

  beforeAll(async () => {
    source = await createPostgresSource(SETUP);
    server = await startTestServer(dialect, { config: { dataSources: ALLOW_PRIVATE } });
    key = (await server.bootstrap()).key;
    otherKey = (await server.bootstrap('Other')).key;
    const created = await server.request('POST', '/v1/data-sources', { key, body: { name: 'Shop', kind: 'postgres', url: source.url } });
    const table = await server.request('POST', '/v1/fact-tables', {
      key,
      body: {
        data_source_id: created.body.id,
        name: 'Purchases',
        sql: 'SELECT user_id, purchased_at, amount, country FROM purchases',
        unit_id_column: 'user_id',
        timestamp_column: 'purchased_at',
      },
    });
    expect(table.status, table.text).toBe(201);
    factTableId = table.body.id;
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  const post = (body: Record<string, unknown>, as = key) => server.request('POST', '/v1/metrics', { key: as, body: { name: 'M', ...body } });

  async function expectRefused(body: Record<string, unknown>, pointer: string, message: RegExp, as = key) {
    const answer = await post(body, as);
    expect(answer.status, answer.text).toBe(422);
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(answer.body.errors, answer.text).toEqual(expect.arrayContaining([expect.objectContaining({ pointer, message: expect.stringMatching(message) })]));
  }

  it('creates a metric on a fact table: its column and filter shown, no event key, the definition audit-logged', async () => {
    const created = await post({
      key: 'fr-revenue',
      kind: 'revenue',
      aggregation: 'sum',
      fact_table_id: factTableId,
      column: 'amount',
      filter: "country = 'FR'",
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ fact_table_id: factTableId, column: 'amount', filter: "country = 'FR'", event_key: null, property_path: null });
    const read = await server.request('GET', `/v1/metrics/${created.body.id}`, { key });
    expect(read.body).toMatchObject({ fact_table_id: factTableId, column: 'amount', filter: "country = 'FR'" });
    const audit = await server.request('GET', '/v1/audit?action=metric.created', { key });
    const entry = audit.body.data.find((item: { target_id: string }) => item.target_id === created.body.id);
    expect(entry.payload).toMatchObject({ fact_table_id: factTableId, column: 'amount', filter: "country = 'FR'", event_key: null });
    const counted = await post({ key: 'buyers', kind: 'binary', fact_table_id: factTableId });
    expect(counted.status, counted.text).toBe(201);
    expect(counted.body).toMatchObject({ column: null, filter: null });
  });

  it('refuses a fact table that is not the workspace’s, and event_key beside fact_table_id', async () => {
    await expectRefused({ key: 'a', kind: 'count', fact_table_id: '01J00000000000000000000000' }, '/fact_table_id', /no fact table/);
    await expectRefused({ key: 'b', kind: 'count', fact_table_id: factTableId }, '/fact_table_id', /no fact table/, otherKey);
    await expectRefused({ key: 'c', kind: 'count', fact_table_id: factTableId, event_key: 'purchase' }, '/fact_table_id', /not both/);
    await expectRefused({ key: 'd', kind: 'count' }, '/event_key', /required/);
  });

  it('refuses a column that is not among the described ones, a text column to sum, and the column rules of each aggregation', async () => {
    await expectRefused({ key: 'e', kind: 'revenue', aggregation: 'sum', fact_table_id: factTableId, column: 'price' }, '/column', /is not a column.*amount/);
    await expectRefused({ key: 'f', kind: 'revenue', aggregation: 'sum', fact_table_id: factTableId, column: 'country' }, '/column', /number column/);
    await expectRefused({ key: 'g', kind: 'revenue', aggregation: 'mean', fact_table_id: factTableId }, '/column', /name the column/);
    await expectRefused({ key: 'h', kind: 'count', fact_table_id: factTableId, column: 'amount' }, '/column', /count counts rows/);
    await expectRefused({ key: 'i', kind: 'revenue', aggregation: 'sum', fact_table_id: factTableId, property_path: 'amount' }, '/property_path', /column/);
    await expectRefused({ key: 'j', kind: 'count', event_key: 'purchase', column: 'amount' }, '/column', /only a metric on a fact table/);
    const onFacts = await post({ key: 'rows', kind: 'count', fact_table_id: factTableId });
    const onEvents = await post({ key: 'purchases', kind: 'count', event_key: 'purchase' });
    await expectRefused(
      { key: 'mixed', kind: 'ratio', numerator_metric_id: onFacts.body.id, denominator_metric_id: onEvents.body.id },
      '/denominator_metric_id',
      /both read/,
    );
    await expectRefused(
      { key: 'k', kind: 'ratio', numerator_metric_id: factTableId, denominator_metric_id: factTableId, fact_table_id: factTableId },
      '/fact_table_id',
      /ratio/,
    );
  });

  it('refuses a filter that is not one read-only expression, or that the source does not accept, and leaves the source as it was', async () => {
    await expectRefused({ key: 'l', kind: 'count', fact_table_id: factTableId, filter: "country = 'FR'; DELETE FROM purchases" }, '/filter', /one expression/);
    await expectRefused({ key: 'm', kind: 'count', fact_table_id: factTableId, filter: "nextval('orders_seq') > 0" }, '/filter', /nextval/);
    await expectRefused({ key: 'n', kind: 'count', fact_table_id: factTableId, filter: "country = 'FR') OR (true" }, '/filter', /parenthesis/);
    await expectRefused({ key: 'o', kind: 'count', fact_table_id: factTableId, filter: 'colour = 1' }, '/filter', /the source refused it/);
    const rows = await source.admin.query<{ n: string }>('SELECT count(*) AS n FROM purchases');
    expect(Number(rows.rows[0]?.n)).toBe(2);
    const sequence = await source.admin.query<{ is_called: boolean }>('SELECT is_called FROM orders_seq');
    expect(sequence.rows[0]?.is_called).toBe(false);
  });

  it('changes a filter and a column with PATCH (checked the same way, audit-logged), and refuses them on a metric on events', async () => {
    const created = await post({ key: 'rev', kind: 'revenue', aggregation: 'sum', fact_table_id: factTableId, column: 'amount' });
    const patched = await server.request('PATCH', `/v1/metrics/${created.body.id}`, { key, body: { filter: "country = 'DE'" } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.filter).toBe("country = 'DE'");
    const audit = await server.request('GET', '/v1/audit?action=metric.updated', { key });
    expect(audit.body.data[0].payload.changes).toEqual({ filter: { from: null, to: "country = 'DE'" } });
    const refused = await server.request('PATCH', `/v1/metrics/${created.body.id}`, { key, body: { column: 'country' } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body.errors[0].pointer).toBe('/column');
    const onEvents = await post({ key: 'ev', kind: 'count', event_key: 'purchase' });
    const wrong = await server.request('PATCH', `/v1/metrics/${onEvents.body.id}`, { key, body: { filter: 'x = 1' } });
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body.errors[0].pointer).toBe('/filter');
  });

  it('refuses to delete a fact table that metrics read (409, the metrics listed)', async () => {
    const answer = await server.request('DELETE', `/v1/fact-tables/${factTableId}`, { key });
    expect(answer.status, answer.text).toBe(409);
    expect(answer.body.type).toBe('https://verdict.dev/problems/fact-table-in-use');
    expect(answer.body.referrers.map((item: { key: string }) => item.key)).toEqual(expect.arrayContaining(['fr-revenue', 'buyers']));
  });

  it('counts late rows: a row that reaches the fact table after a snapshot, timestamped inside a unit’s window, counts in the next', async () => {
    const boot = await server.bootstrap('Late rows');
    const created = await server.request('POST', '/v1/data-sources', { key: boot.key, body: { name: 'Shop', kind: 'postgres', url: source.url } });
    const table = await server.request('POST', '/v1/fact-tables', {
      key: boot.key,
      body: {
        data_source_id: created.body.id,
        name: 'Purchases',
        sql: 'SELECT user_id, purchased_at FROM purchases',
        unit_id_column: 'user_id',
        timestamp_column: 'purchased_at',
      },
    });
    const metric = await server.request('POST', '/v1/metrics', {
      key: boot.key,
      body: { key: 'bought', name: 'Bought', kind: 'binary', fact_table_id: table.body.id },
    });
    expect(metric.status, metric.text).toBe(201);
    const experiment = await server.request('POST', '/v1/experiments', {
      key: boot.key,
      body: {
        environment_id: boot.environmentId,
        key: 'late-rows',
        name: 'Late rows',
        hypothesis: 'late rows count',
        unit_type: 'user',
        variants: [
          { key: 'control', weight: 50 },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: metric.body.id,
      },
    });
    expect((await server.request('POST', `/v1/experiments/${experiment.body.id}/start`, { key: boot.key })).status).toBe(200);
    for (const unit of ['late-1', 'late-2', 'late-3']) {
      const assigned = await server.request('POST', '/v1/assign', { key: boot.key, body: { experiment_key: 'late-rows', unit_id: unit } });
      expect(assigned.status, assigned.text).toBe(200);
    }
    const inWindow = new Date(Date.now() + 60_000).toISOString();
    const converted = async () => {
      const snapshot = await server.request('POST', `/v1/experiments/${experiment.body.id}/results/compute`, { key: boot.key });
      expect(snapshot.status, snapshot.text).toBe(201);
      return snapshot.body.per_variant.reduce((total: number, variant: { conversions: number }) => total + variant.conversions, 0);
    };
    await source.admin.query("INSERT INTO purchases VALUES ('late-1', $1, 5, 'FR')", [inWindow]);
    expect(await converted()).toBe(1);
    // Arrives after that snapshot, timestamped as early as the first: counted now.
    await source.admin.query("INSERT INTO purchases VALUES ('late-2', $1, 5, 'FR')", [inWindow]);
    expect(await converted()).toBe(2);
  });
});

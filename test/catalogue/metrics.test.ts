import { beforeEach, expect, it } from 'vitest';
import { findMetricsByIds } from '../../src/features/metrics/read.js';
import { describeEachDialect } from '../support/each-dialect.js';
import type { Bootstrap } from '../support/server.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const checkout = { key: 'checkout', name: 'Checkout', event_key: 'checkout.completed', kind: 'binary' };
const windows = { 'w-hours': 'PT12H', 'w-mixed': 'P1DT2H30M', 'w-weeks': 'P2W', 'w-max': 'P365D' };
const paths = ['amount', 'order.total', '$.order.total', 'order["total value"]', "items['sku']"];
const revenueWithPath = (index: number, property_path: string) => ({
  key: `revenue-${index}`,
  name: 'Revenue',
  event_key: 'order.paid',
  kind: 'revenue',
  aggregation: 'sum',
  property_path,
});
const sessionLength = { key: 'session-length', name: 'Session', event_key: 'session.end', kind: 'duration', aggregation: 'mean', property_path: 'seconds' };
const pageviews = { key: 'pageviews', name: 'Pageviews', event_key: 'page.viewed', kind: 'count' };

describeEachDialect('metrics', (server) => {
  let acme: Bootstrap;
  const post = (body: unknown, key = acme.key) => server().request('POST', '/v1/metrics', { key, body });
  const errorsOf = async (body: unknown) => {
    const response = await post(body);
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    return response.body.errors as { pointer: string; message: string }[];
  };

  /** The twelve metrics the creation tests make, in their order: what the list and lookup tests read. */
  const createCatalogue = async () => {
    const bodies = [
      checkout,
      ...Object.entries(windows).map(([key, window]) => ({ ...checkout, key, unit_dedup_window: window })),
      ...paths.map((path, index) => revenueWithPath(index, path)),
      sessionLength,
      pageviews,
    ];
    for (const body of bodies) expect((await post(body)).status).toBe(201);
  };

  // Every test gets a workspace of its own, so none sees metrics another test made.
  beforeEach(async () => {
    acme = await server().bootstrap('Acme');
  });

  it('creates a metric with the defaults, stores the window in milliseconds and audits it', async () => {
    const created = await post(checkout);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      workspace_id: acme.workspaceId,
      ...checkout,
      aggregation: 'count',
      unit_dedup_window: 'P7D',
      property_path: null,
      description: null,
      higher_is_better: true,
      capping: null,
      numerator_metric_id: null,
      denominator_metric_id: null,
      unit: null,
      created_at: expect.stringMatching(ISO),
      updated_at: created.body.created_at,
    });
    const row = await server().ctx.db.selectFrom('metrics').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(row.unit_dedup_window_ms).toBe(7 * 24 * 3_600_000);

    const audit = await server().request('GET', `/v1/audit?target_type=metric&target_id=${created.body.id}`, { key: acme.key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        action: 'metric.created',
        actor_id: acme.keyId,
        payload: {
          ...checkout,
          aggregation: 'count',
          unit_dedup_window: 'P7D',
          property_path: null,
          description: null,
          higher_is_better: true,
          capping: null,
          numerator_metric_id: null,
          denominator_metric_id: null,
          unit: null,
        },
      }),
    ]);
    expect((await server().request('GET', `/v1/metrics/${created.body.id}`, { key: acme.key })).body).toEqual(created.body);
  });

  it('keeps the window text as given and accepts every valid window form', async () => {
    for (const [key, window] of Object.entries(windows)) {
      const created = await post({ ...checkout, key, unit_dedup_window: window });
      expect(created.status).toBe(201);
      expect(created.body.unit_dedup_window).toBe(window);
    }
    const mixed = await server()
      .ctx.db.selectFrom('metrics')
      .select('unit_dedup_window_ms')
      .where('workspace_id', '=', acme.workspaceId)
      .where('key', '=', 'w-mixed')
      .executeTakeFirstOrThrow();
    expect(mixed.unit_dedup_window_ms).toBe(95_400_000);
  });

  it('accepts sum and mean over the property path forms and exposes the path as given', async () => {
    for (const [index, property_path] of paths.entries()) {
      const created = await post(revenueWithPath(index, property_path));
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body).toMatchObject({ aggregation: 'sum', property_path });
    }
    const mean = await post(sessionLength);
    expect(mean.status).toBe(201);
    const count = await post(pageviews);
    expect(count.body).toMatchObject({ aggregation: 'count', property_path: null });
  });

  it('answers 422 with a pointer for each schema violation', async () => {
    expect(await errorsOf({ ...checkout, key: 'Not Valid' })).toEqual([{ pointer: '/key', message: expect.stringMatching(/pattern/) }]);
    expect(await errorsOf({ ...checkout, key: 'k'.repeat(129) })).toEqual([{ pointer: '/key', message: expect.any(String) }]);
    expect(await errorsOf({ ...checkout, event_key: 'Checkout!' })).toEqual([{ pointer: '/event_key', message: expect.any(String) }]);
    expect(await errorsOf({ ...checkout, name: '' })).toEqual([{ pointer: '/name', message: expect.any(String) }]);
    expect(await errorsOf({ ...checkout, name: 'n'.repeat(201) })).toEqual([{ pointer: '/name', message: expect.any(String) }]);
    expect(await errorsOf({ ...checkout, kind: 'median' })).toEqual([
      { pointer: '/kind', message: 'must be one of "binary", "count", "revenue", "duration", "ratio", "quantile"' },
    ]);
    expect(await errorsOf({ ...checkout, aggregation: 'median' })).toEqual([{ pointer: '/aggregation', message: 'must be one of "sum", "mean", "count"' }]);
    expect(await errorsOf({ ...checkout, colour: 'red' })).toEqual([{ pointer: '/colour', message: 'is not a known field' }]);
    const missing = await errorsOf({});
    expect(missing.map((e) => e.pointer).sort()).toEqual(['/key', '/kind', '/name']);
    expect(await errorsOf({ key: 'no-events', name: 'No events', kind: 'count' })).toEqual([{ pointer: '/event_key', message: 'is required' }]);
    expect(await errorsOf({ ...checkout, unit_dedup_window: 7 })).toEqual([{ pointer: '/unit_dedup_window', message: expect.any(String) }]);
  });

  it('answers 422 at /unit_dedup_window for windows that are malformed, ambiguous, empty or absurd', async () => {
    const cases: [string, RegExp][] = [
      ['P', /names no length/],
      ['PT', /names no length/],
      ['7D', /starting with P/],
      ['P1H', /after the T/],
      ['P1Y', /years and months have no fixed length/],
      ['P1M', /years and months have no fixed length/],
      ['P0D', /longer than zero/],
      ['PT0.5S', /at least PT1S/],
      ['P366D', /at most P365D/],
      ['-P1D', /negative/],
    ];
    for (const [window, message] of cases) {
      expect(await errorsOf({ ...checkout, unit_dedup_window: window }), window).toEqual([
        { pointer: '/unit_dedup_window', message: expect.stringMatching(message) },
      ]);
    }
  });

  it('answers 422 at /property_path for paths outside the restricted subset', async () => {
    const sum = { key: 'amount', name: 'Amount', event_key: 'order.paid', kind: 'revenue', aggregation: 'sum' };
    const cases: [string, RegExp][] = [
      ['$..price', /recursive descent/],
      ['items[?(@.price > 10)]', /filters/],
      ['items.*', /wildcards/],
      ['items[*]', /wildcards/],
      ['items[0:2]', /slices/],
      ['items[0]', /indexes/],
      ['$', /alone/],
      ['order total', /brackets/],
      ['', /is empty/],
    ];
    for (const [property_path, message] of cases) {
      expect(await errorsOf({ ...sum, property_path }), property_path).toEqual([{ pointer: '/property_path', message: expect.stringMatching(message) }]);
    }
  });

  it('enforces the aggregation rules per kind', async () => {
    const base = { key: 'rule-check', name: 'Rule', event_key: 'thing.done' };
    expect(await errorsOf({ ...base, kind: 'binary', aggregation: 'sum', property_path: 'amount' })).toEqual([
      { pointer: '/aggregation', message: expect.stringMatching(/binary metric counts whether a unit converted/) },
    ]);
    expect(await errorsOf({ ...base, kind: 'binary', aggregation: 'mean' })).toEqual([{ pointer: '/aggregation', message: expect.any(String) }]);
    expect(await errorsOf({ ...base, kind: 'revenue' })).toEqual([
      { pointer: '/aggregation', message: expect.stringMatching(/revenue metric measures an amount.*defaults to count/) },
    ]);
    expect(await errorsOf({ ...base, kind: 'duration', aggregation: 'count' })).toEqual([{ pointer: '/aggregation', message: expect.any(String) }]);
    expect(await errorsOf({ ...base, kind: 'count', aggregation: 'sum' })).toEqual([
      { pointer: '/property_path', message: expect.stringMatching(/sum aggregates a number.*name the property/) },
    ]);
    expect(await errorsOf({ ...base, kind: 'revenue', aggregation: 'mean', property_path: null })).toEqual([
      { pointer: '/property_path', message: expect.any(String) },
    ]);
    expect(await errorsOf({ ...base, kind: 'binary', property_path: 'amount' })).toEqual([
      { pointer: '/property_path', message: expect.stringMatching(/count does not read event properties/) },
    ]);
    const several = await errorsOf({ ...base, kind: 'binary', aggregation: 'sum', unit_dedup_window: 'P1M' });
    expect(several.map((e) => e.pointer)).toEqual(['/unit_dedup_window', '/aggregation']);
  });

  it('answers 409 for a duplicate key and writes no audit entry', async () => {
    expect((await post(checkout)).status).toBe(201);
    const before = await server().request('GET', '/v1/audit?action=metric.created&limit=200', { key: acme.key });
    const duplicate = await post({ ...checkout, name: 'Again' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ type: 'https://verdict.dev/problems/key-taken', title: 'Key taken', detail: expect.stringMatching(/"checkout"/) });
    const after = await server().request('GET', '/v1/audit?action=metric.created&limit=200', { key: acme.key });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });

  it('pages the list oldest first with limit and cursor', async () => {
    await createCatalogue();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await server().request('GET', `/v1/metrics?limit=4${cursor ? `&cursor=${cursor}` : ''}`, { key: acme.key });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(4);
      seen.push(...page.body.data.map((m: { key: string }) => m.key));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen.slice(0, 3)).toEqual(['checkout', 'w-hours', 'w-mixed']);
    expect(seen).toHaveLength(12);
    expect((await server().request('GET', '/v1/metrics?limit=201', { key: acme.key })).status).toBe(400);
    expect((await server().request('GET', '/v1/metrics?cursor=nope', { key: acme.key })).status).toBe(400);
  });

  it('keeps workspaces apart: another workspace sees nothing and gets 404, and may reuse the key', async () => {
    expect((await post(checkout)).status).toBe(201);
    const globex = await server().bootstrap('Globex');
    const acmeMetric = (await server().request('GET', '/v1/metrics?limit=1', { key: acme.key })).body.data[0];
    expect((await server().request('GET', '/v1/metrics', { key: globex.key })).body).toEqual({ data: [], next_cursor: null });
    const foreign = await server().request('GET', `/v1/metrics/${acmeMetric.id}`, { key: globex.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.title).toBe('Not Found');
    expect((await server().request('GET', '/v1/metrics/01ARZ3NDEKTSV4RRFFQ69G5FAV', { key: acme.key })).status).toBe(404);
    expect((await post(checkout, globex.key)).status).toBe(201);
  });

  it('refuses client keys (403) and missing keys (401)', async () => {
    expect((await post(checkout)).status).toBe(201);
    const client = await server().request('POST', '/v1/api-keys', { key: acme.key, body: { name: 'sdk', kind: 'client' } });
    const clientKey = client.body.key as string;
    const metric = (await server().request('GET', '/v1/metrics?limit=1', { key: acme.key })).body.data[0];
    expect((await server().request('GET', '/v1/metrics', { key: clientKey })).status).toBe(403);
    expect((await server().request('GET', `/v1/metrics/${metric.id}`, { key: clientKey })).status).toBe(403);
    expect((await post({ ...checkout, key: 'from-client' }, clientKey)).status).toBe(403);
    expect((await server().request('GET', '/v1/metrics')).status).toBe(401);
  });

  it('findMetricsByIds returns the workspace’s rows in the order asked, skipping unknown and foreign ids', async () => {
    await createCatalogue();
    const globex = await server().bootstrap('Initech');
    const foreign = await post({ ...checkout, key: 'foreign' }, globex.key);
    const page = (await server().request('GET', '/v1/metrics?limit=3', { key: acme.key })).body.data as { id: string; key: string }[];
    const [first, second, third] = page.map((m) => m.id);
    const rows = await findMetricsByIds(server().ctx.db, acme.workspaceId, [third!, first!, 'missing', foreign.body.id, third!, second!]);
    expect(rows.map((row) => row.id)).toEqual([third, first, second]);
    expect(rows[0]).toMatchObject({ workspace_id: acme.workspaceId, unit_dedup_window_ms: expect.any(Number) });
    expect(await findMetricsByIds(server().ctx.db, acme.workspaceId, [])).toEqual([]);
  });
});

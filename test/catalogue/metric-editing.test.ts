import { beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { Bootstrap } from '../support/server.js';

/** The edit the editing test makes to `revenue`, and the state the refusal test starts from. */
const revenueEdit = {
  name: 'Net revenue',
  description: 'after refunds',
  higher_is_better: false,
  capping: { type: 'absolute', value: 500 },
  property_path: 'order.net',
  unit_dedup_window: 'P14D',
};

/** docs/metrics.md: direction, capping, ratio metrics, and editing and deleting metrics. */
describeEachDialect('metric direction, capping, ratios, edits and deletes', (server) => {
  let acme: Bootstrap;
  const request = (method: string, path: string, body?: unknown, key = acme.key) =>
    server().request(method, path, { key, ...(body === undefined ? {} : { body }) });
  const create = async (body: Record<string, unknown>) => {
    const response = await request('POST', '/v1/metrics', { name: String(body.key), ...body });
    expect(response.status, response.text).toBe(201);
    return response.body;
  };
  const refused = async (method: string, path: string, body: unknown) => {
    const response = await request(method, path, body);
    expect(response.status, response.text).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    return response.body.errors as { pointer: string; message: string }[];
  };
  const auditOf = async (id: string) => (await request('GET', `/v1/audit?target_type=metric&target_id=${id}`)).body.data as any[];
  const rowCount = async () =>
    Number(
      (
        await server()
          .ctx.db.selectFrom('metrics')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /** The three metrics of the first test, which every later test edits, refers to or deletes. */
  const createMetrics = async () => {
    const errors = await create({ key: 'errors', event_key: 'app.error', kind: 'binary', higher_is_better: false, description: 'any error' });
    const revenue = await create({
      key: 'revenue',
      event_key: 'order.paid',
      kind: 'revenue',
      aggregation: 'sum',
      property_path: 'amount',
      capping: { type: 'percentile', value: 0.99 },
    });
    const orders = await create({ key: 'orders', event_key: 'order.paid', kind: 'count', capping: { type: 'absolute', value: 10 } });
    return { errors, revenue, orders };
  };
  const createRatio = (revenue: { id: string }, orders: { id: string }) =>
    create({ key: 'revenue-per-order', kind: 'ratio', numerator_metric_id: revenue.id, denominator_metric_id: orders.id });

  // Every test gets a workspace of its own and makes the metrics it needs there.
  beforeEach(async () => {
    acme = await server().bootstrap('Acme');
  });

  it('stores direction and capping and shows them back', async () => {
    const { errors, revenue, orders } = await createMetrics();
    expect(errors).toMatchObject({ higher_is_better: false, description: 'any error', capping: null });
    expect(revenue).toMatchObject({ higher_is_better: true, capping: { type: 'percentile', value: 0.99 } });
    expect((await request('GET', `/v1/metrics/${orders.id}`)).body.capping).toEqual({ type: 'absolute', value: 10 });
  });

  it('refuses capping on binary metrics and percentiles outside (0.5, 1), changing nothing', async () => {
    const before = await rowCount();
    const binary = { key: 'capped-binary', name: 'x', event_key: 'a.b', kind: 'binary' };
    expect(await refused('POST', '/v1/metrics', { ...binary, capping: { type: 'absolute', value: 1 } })).toEqual([
      { pointer: '/capping', message: expect.stringMatching(/nothing to cap/) },
    ]);
    const revenue = { key: 'capped-revenue', name: 'x', event_key: 'a.b', kind: 'revenue', aggregation: 'sum', property_path: 'v' };
    for (const value of [0.5, 1, 0.2, 1.5]) {
      expect(await refused('POST', '/v1/metrics', { ...revenue, capping: { type: 'percentile', value } }), String(value)).toEqual([
        { pointer: '/capping', message: expect.stringMatching(/strictly between 0.5 and 1/) },
      ]);
    }
    for (const value of [0, -3]) {
      expect(await refused('POST', '/v1/metrics', { ...revenue, capping: { type: 'absolute', value } })).toEqual([
        { pointer: '/capping', message: expect.stringMatching(/greater than 0/) },
      ]);
    }
    expect((await refused('POST', '/v1/metrics', { ...revenue, capping: { type: 'median', value: 3 } }))[0]?.pointer).toMatch(/^\/capping/);
    expect(await rowCount()).toBe(before);
  });

  it('creates a ratio of two metrics of the workspace and refuses anything else', async () => {
    const { revenue, orders } = await createMetrics();
    const ratio = await createRatio(revenue, orders);
    expect(ratio).toMatchObject({
      kind: 'ratio',
      event_key: null,
      aggregation: 'sum',
      numerator_metric_id: revenue.id,
      denominator_metric_id: orders.id,
      capping: null,
    });

    const globex = await server().bootstrap('Globex');
    const foreign = (
      await server().request('POST', '/v1/metrics', { key: globex.key, body: { key: 'theirs', name: 'Theirs', event_key: 'x.y', kind: 'count' } })
    ).body;
    const before = await rowCount();
    const base = { key: 'bad-ratio', name: 'Bad', kind: 'ratio' };
    expect(await refused('POST', '/v1/metrics', base)).toEqual([
      { pointer: '/numerator_metric_id', message: expect.any(String) },
      { pointer: '/denominator_metric_id', message: expect.any(String) },
    ]);
    expect(await refused('POST', '/v1/metrics', { ...base, numerator_metric_id: ratio.id, denominator_metric_id: orders.id })).toEqual([
      { pointer: '/numerator_metric_id', message: expect.stringMatching(/ratio of ratios/) },
    ]);
    expect(await refused('POST', '/v1/metrics', { ...base, numerator_metric_id: foreign.id, denominator_metric_id: orders.id })).toEqual([
      { pointer: '/numerator_metric_id', message: 'no metric with this id exists in the workspace' },
    ]);
    expect(await refused('POST', '/v1/metrics', { ...base, event_key: 'x.y', numerator_metric_id: revenue.id, denominator_metric_id: orders.id })).toEqual([
      { pointer: '/event_key', message: expect.stringMatching(/remove event_key/) },
    ]);
    expect(
      await refused('POST', '/v1/metrics', {
        ...base,
        numerator_metric_id: revenue.id,
        denominator_metric_id: orders.id,
        capping: { type: 'absolute', value: 3 },
      }),
    ).toEqual([{ pointer: '/capping', message: expect.stringMatching(/numerator and denominator/) }]);
    expect(await refused('POST', '/v1/metrics', { key: 'not-ratio', name: 'x', event_key: 'a.b', kind: 'count', numerator_metric_id: revenue.id })).toEqual([
      { pointer: '/numerator_metric_id', message: expect.stringMatching(/only a ratio metric/) },
    ]);
    expect(await rowCount()).toBe(before);
  });

  it('edits name, description, direction, capping, path and window, audit-logged with what changed', async () => {
    const { revenue } = await createMetrics();
    const body = revenueEdit;
    const patched = await request('PATCH', `/v1/metrics/${revenue.id}`, body);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ ...body, key: 'revenue', kind: 'revenue', id: revenue.id, created_at: revenue.created_at });
    expect((await request('GET', `/v1/metrics/${revenue.id}`)).body).toEqual(patched.body);
    const row = await server().ctx.db.selectFrom('metrics').selectAll().where('id', '=', revenue.id).executeTakeFirstOrThrow();
    expect(row.unit_dedup_window_ms).toBe(14 * 86_400_000);
    const updated = (await auditOf(revenue.id)).filter((entry) => entry.action === 'metric.updated');
    expect(updated).toEqual([
      expect.objectContaining({
        actor_id: acme.keyId,
        payload: {
          key: 'revenue',
          changes: {
            name: { from: 'revenue', to: 'Net revenue' },
            description: { from: null, to: 'after refunds' },
            higher_is_better: { from: true, to: false },
            capping: { from: { type: 'percentile', value: 0.99 }, to: { type: 'absolute', value: 500 } },
            property_path: { from: 'amount', to: 'order.net' },
            unit_dedup_window: { from: 'P7D', to: 'P14D' },
          },
        },
      }),
    ]);
    // An unchanged body changes nothing and logs nothing.
    expect((await request('PATCH', `/v1/metrics/${revenue.id}`, { name: 'Net revenue', key: 'revenue', kind: 'revenue' })).status).toBe(200);
    expect((await auditOf(revenue.id)).filter((entry) => entry.action === 'metric.updated')).toHaveLength(1);
  });

  it('stores an optional unit, edits and clears it (audit-logged), and refuses a malformed one or one on a binary metric', async () => {
    const { revenue, errors, orders } = await createMetrics();
    expect(revenue.unit).toBeNull();
    const timed = await create({ key: 'load', event_key: 'page.load', kind: 'duration', aggregation: 'mean', property_path: 'ms', unit: 'ms' });
    expect((await request('GET', `/v1/metrics/${timed.id}`)).body.unit).toBe('ms');
    const patched = await request('PATCH', `/v1/metrics/${revenue.id}`, { unit: 'USD' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.unit).toBe('USD');
    expect((await request('PATCH', `/v1/metrics/${revenue.id}`, { unit: null })).body.unit).toBeNull();
    const changes = (await auditOf(revenue.id)).filter((entry) => entry.action === 'metric.updated').map((entry) => entry.payload.changes.unit);
    // Newest first.
    expect(changes).toEqual([
      { from: 'USD', to: null },
      { from: null, to: 'USD' },
    ]);
    const before = await rowCount();
    const base = { key: 'bad-unit', name: 'x', event_key: 'a.b', kind: 'count' };
    for (const unit of ['', ' ms', 'ms ', 'a'.repeat(17), 'm\ns', 42]) {
      expect((await refused('POST', '/v1/metrics', { ...base, unit }))[0]?.pointer, JSON.stringify(unit)).toBe('/unit');
    }
    expect(await refused('POST', '/v1/metrics', { ...base, kind: 'binary', unit: '%' })).toEqual([
      { pointer: '/unit', message: expect.stringMatching(/binary metric is a rate/) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${errors.id}`, { unit: 'errors' })).toEqual([{ pointer: '/unit', message: expect.stringMatching(/rate/) }]);
    expect(await rowCount()).toBe(before);
    expect((await request('GET', `/v1/metrics/${orders.id}`)).body.unit).toBeNull();
    expect((await request('GET', `/v1/metrics/${errors.id}`)).body.unit).toBeNull();
    // A unit of several words and symbols is fine.
    expect((await request('PATCH', `/v1/metrics/${orders.id}`, { unit: 'items / order' })).body.unit).toBe('items / order');
  });

  it('refuses to change key or kind, or to break a rule, and changes nothing', async () => {
    const { revenue, errors } = await createMetrics();
    expect((await request('PATCH', `/v1/metrics/${revenue.id}`, revenueEdit)).status).toBe(200);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { key: 'renamed' })).toEqual([
      { pointer: '/key', message: expect.stringMatching(/cannot change/) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { kind: 'count' })).toEqual([
      { pointer: '/kind', message: expect.stringMatching(/cannot change/) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { event_key: 'other' })).toEqual([{ pointer: '/event_key', message: 'is not a known field' }]);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { property_path: null })).toEqual([
      { pointer: '/property_path', message: expect.stringMatching(/name the property/) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { capping: { type: 'percentile', value: 0.4 } })).toEqual([
      { pointer: '/capping', message: expect.any(String) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${revenue.id}`, { unit_dedup_window: 'P1M' })).toEqual([
      { pointer: '/unit_dedup_window', message: expect.any(String) },
    ]);
    expect(await refused('PATCH', `/v1/metrics/${errors.id}`, { capping: { type: 'absolute', value: 1 } })).toEqual([
      { pointer: '/capping', message: expect.any(String) },
    ]);
    expect((await request('GET', `/v1/metrics/${revenue.id}`)).body).toMatchObject({
      key: 'revenue',
      kind: 'revenue',
      property_path: 'order.net',
      capping: { type: 'absolute', value: 500 },
    });
  });

  it('deletes a metric no draft or running experiment uses; 409 while one does, or while a ratio is built on it', async () => {
    const created = await createMetrics();
    const ratio = await createRatio(created.revenue, created.orders);
    const metrics: Record<string, any> = { ...created, 'revenue-per-order': ratio };
    const byKey = (key: string) => metrics[key];
    const experiment = await request('POST', '/v1/experiments', {
      environment_id: acme.environmentId,
      key: 'uses-errors',
      name: 'E',
      hypothesis: 'h',
      unit_type: 'user',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
      primary_metric_id: byKey('orders').id,
      guardrail_metric_ids: [byKey('errors').id],
    });
    expect(experiment.status, experiment.text).toBe(201);
    const blocked = await request('DELETE', `/v1/metrics/${byKey('errors').id}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.type).toBe('https://verdict.dev/problems/metric-in-use');
    expect(blocked.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(blocked.body.referrers).toEqual([{ type: 'experiment', id: experiment.body.id, key: 'uses-errors' }]);
    const ratioBlocked = await request('DELETE', `/v1/metrics/${byKey('revenue').id}`);
    expect(ratioBlocked.status).toBe(409);
    expect(ratioBlocked.body.type).toBe('https://verdict.dev/problems/metric-in-use');
    expect(ratioBlocked.body.referrers).toEqual([{ type: 'metric', id: byKey('revenue-per-order').id, key: 'revenue-per-order' }]);
    expect((await request('GET', `/v1/metrics/${byKey('errors').id}`)).status).toBe(200);

    // Archived (or stopped) experiments keep their snapshots; they do not hold the metric.
    expect((await request('DELETE', `/v1/experiments/${experiment.body.id}`)).status).toBe(204);
    expect((await request('DELETE', `/v1/metrics/${byKey('errors').id}`)).status).toBe(204);
    expect((await request('GET', `/v1/metrics/${byKey('errors').id}`)).status).toBe(404);
    expect((await auditOf(byKey('errors').id)).map((entry) => entry.action)).toEqual(['metric.deleted', 'metric.created']);
    expect((await request('DELETE', `/v1/metrics/${byKey('errors').id}`)).status).toBe(404);
  });

  it('keeps other workspaces out: 404 on PATCH and DELETE', async () => {
    const { orders } = await createMetrics();
    const globex = await server().bootstrap('Globex 2');
    expect((await request('PATCH', `/v1/metrics/${orders.id}`, { name: 'Stolen' }, globex.key)).status).toBe(404);
    expect((await request('DELETE', `/v1/metrics/${orders.id}`, undefined, globex.key)).status).toBe(404);
    expect((await request('GET', `/v1/metrics/${orders.id}`)).body.name).toBe('orders');
  });
});

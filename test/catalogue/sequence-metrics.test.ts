import { beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { Bootstrap } from '../support/server.js';

/** docs/metrics.md "Funnel metrics" and "Retention metrics": what is stored, and the 422s naming each field. */
const funnel = {
  key: 'checkout-funnel',
  name: 'Checkout funnel',
  kind: 'funnel',
  steps: [
    { event_key: 'product.viewed' },
    { event_key: 'cart.added', where: { property_path: 'cart.size', op: 'gte', value: 2 } },
    { event_key: 'order.paid' },
  ],
  window: 'P3D',
};
const retention = { key: 'week-two', name: 'Came back in week two', kind: 'retention', event_key: 'session.started', retention: { from: 'P7D', to: 'P14D' } };

describeEachDialect('funnel and retention metrics', (server) => {
  let acme: Bootstrap;
  const post = (body: unknown) => server().request('POST', '/v1/metrics', { key: acme.key, body });
  const pointersOf = async (body: unknown) => {
    const response = await post(body);
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    return (response.body.errors as { pointer: string }[]).map((error) => error.pointer);
  };

  beforeEach(async () => {
    acme = await server().bootstrap('Acme');
  });

  it('stores a funnel with its steps, conditions and window, and audits it', async () => {
    const created = await post(funnel);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ kind: 'funnel', event_key: null, steps: funnel.steps, window: 'P3D', retention: null, aggregation: 'count' });
    const read = await server().request('GET', `/v1/metrics/${created.body.id}`, { key: acme.key });
    expect(read.body).toEqual(created.body);
    const audit = await server().request('GET', `/v1/audit?target_type=metric&target_id=${created.body.id}`, { key: acme.key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({ action: 'metric.created', payload: expect.objectContaining({ kind: 'funnel', steps: funnel.steps, window: 'P3D' }) }),
    ]);
  });

  it('stores a retention metric, with any event when it names none', async () => {
    const created = await post(retention);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ kind: 'retention', event_key: 'session.started', retention: { from: 'P7D', to: 'P14D' }, steps: null, window: null });
    const anyEvent = await post({ key: 'any', name: 'Any', kind: 'retention', retention: { from: 'P0D', to: 'P1D' } });
    expect(anyEvent.status, anyEvent.text).toBe(201);
    expect(anyEvent.body).toMatchObject({ event_key: null, retention: { from: 'P0D', to: 'P1D' } });
  });

  it('edits the name and direction of a funnel and keeps its steps; refuses what it does not take', async () => {
    const created = await post(funnel);
    const patched = await server().request('PATCH', `/v1/metrics/${created.body.id}`, { key: acme.key, body: { name: 'Renamed', higher_is_better: false } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ name: 'Renamed', higher_is_better: false, steps: funnel.steps, window: 'P3D' });
    const capped = await server().request('PATCH', `/v1/metrics/${created.body.id}`, { key: acme.key, body: { capping: { type: 'absolute', value: 3 } } });
    expect(capped.status).toBe(422);
    expect(capped.body.errors.map((error: any) => error.pointer)).toEqual(['/capping']);
  });

  it('answers 422 naming the field for too few or too many steps, a bad window and bad conditions', async () => {
    const step = { event_key: 'a' };
    expect(await pointersOf({ ...funnel, steps: [step] })).toEqual(['/steps']);
    expect(await pointersOf({ ...funnel, steps: Array.from({ length: 11 }, () => step) })).toEqual(['/steps']);
    expect(await pointersOf({ ...funnel, steps: undefined })).toEqual(['/steps']);
    expect(await pointersOf({ ...funnel, window: 'P1M' })).toEqual(['/window']);
    expect(await pointersOf({ ...funnel, window: undefined })).toEqual(['/window']);
    expect(await pointersOf({ ...funnel, window: 'PT0S' })).toEqual(['/window']);
    const badPath = [step, { event_key: 'b', where: { property_path: 'items[*]', op: 'eq', value: 'x' } }];
    expect(await pointersOf({ ...funnel, steps: badPath })).toEqual(['/steps/1/where/property_path']);
    const badValue = [step, { event_key: 'b', where: { property_path: 'n', op: 'gt', value: 'x' } }];
    expect(await pointersOf({ ...funnel, steps: badValue })).toEqual(['/steps/1/where/value']);
    expect(await pointersOf({ ...funnel, event_key: 'a' })).toEqual(['/event_key']);
    expect(await pointersOf({ ...funnel, aggregation: 'sum', property_path: 'amount' })).toEqual(['/aggregation', '/property_path']);
  });

  it('answers 422 naming the field for bad retention bounds, from at or after to, and misplaced fields', async () => {
    expect(await pointersOf({ ...retention, retention: { from: 'P14D', to: 'P7D' } })).toEqual(['/retention/to']);
    expect(await pointersOf({ ...retention, retention: { from: 'P7D', to: 'P7D' } })).toEqual(['/retention/to']);
    expect(await pointersOf({ ...retention, retention: { from: 'seven days', to: 'P7D' } })).toEqual(['/retention/from']);
    expect(await pointersOf({ ...retention, retention: { from: 'P0D', to: 'P400D' } })).toEqual(['/retention/to']);
    expect(await pointersOf({ ...retention, retention: undefined })).toEqual(['/retention']);
    expect(await pointersOf({ ...retention, window: 'P1D' })).toEqual(['/window']);
    expect(await pointersOf({ ...retention, unit: 'days' })).toEqual(['/unit']);
    expect(await pointersOf({ key: 'plain', name: 'Plain', kind: 'binary', event_key: 'a', steps: funnel.steps, retention: retention.retention })).toEqual([
      '/steps',
      '/retention',
    ]);
  });
});

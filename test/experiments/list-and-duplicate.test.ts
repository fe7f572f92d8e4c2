// The experiment list at scale (issue #52): search by name or key (any case, % and _ taken
// literally), newest first, with the status filter; and duplicating an experiment's definition
// into a new draft, audit-logged with its source. On SQLite and PostgreSQL.
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { experimentBody } from './helpers.js';

describeEachDialect('experiment list and duplicate', (server) => {
  let key: string;
  let environmentId: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    const experiments: [string, string][] = [
      ['checkout-button', 'Checkout button colour'],
      ['checkout-copy', 'One-page checkout'],
      ['pricing', 'Pricing page: 50%_off banner'],
      ['onboarding', 'Onboarding emails'],
    ];
    for (const [experimentKey, name] of experiments) {
      const created = await server().request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, { key: experimentKey, name }) });
      expect(created.status, created.text).toBe(201);
      ids[experimentKey] = created.body.id;
    }
    await server().request('POST', `/v1/experiments/${ids['checkout-copy']}/start`, { key });
  });

  async function keysOf(query: string): Promise<string[]> {
    const response = await server().request('GET', `/v1/experiments?${query}`, { key });
    expect(response.status, response.text).toBe(200);
    return response.body.data.map((experiment: { key: string }) => experiment.key);
  }

  it('finds experiments by a part of the name or the key, in any case, and combines it with the status', async () => {
    expect(await keysOf('q=CHECKOUT')).toEqual(['checkout-button', 'checkout-copy']);
    expect(await keysOf('q=emails')).toEqual(['onboarding']);
    expect(await keysOf('q=checkout&status=running')).toEqual(['checkout-copy']);
    expect(await keysOf('q=nothing-like-this')).toEqual([]);
  });

  it('takes % and _ in the search literally', async () => {
    expect(await keysOf(`q=${encodeURIComponent('50%_off')}`)).toEqual(['pricing']);
    expect(await keysOf(`q=${encodeURIComponent('%')}`)).toEqual(['pricing']);
    expect(await keysOf(`q=${encodeURIComponent('_')}`)).toEqual(['pricing']);
  });

  it('lists newest first on request, and pages through either order', async () => {
    const oldest = await keysOf('');
    expect(await keysOf('order=newest')).toEqual([...oldest].reverse());
    const first = await server().request('GET', '/v1/experiments?order=newest&limit=2', { key });
    const second = await server().request('GET', `/v1/experiments?order=newest&limit=2&cursor=${first.body.next_cursor}`, { key });
    expect([...first.body.data, ...second.body.data].map((e: { key: string }) => e.key)).toEqual([...oldest].reverse().slice(0, 4));
    const bad = await server().request('GET', '/v1/experiments?order=sideways', { key });
    expect(bad.status).toBe(400);
  });

  it('duplicates a definition into a new draft under a new key, audit-logged with its source; a taken key changes nothing', async () => {
    const source = (await server().request('GET', `/v1/experiments/${ids['checkout-copy']}`, { key })).body;
    const copy = await server().request('POST', `/v1/experiments/${source.id}/duplicate`, { key, body: { key: 'checkout-copy-2' } });
    expect(copy.status, copy.text).toBe(201);
    expect(copy.body).toMatchObject({
      key: 'checkout-copy-2',
      name: 'Copy of One-page checkout',
      status: 'draft',
      started_at: null,
      hypothesis: source.hypothesis,
      decision_rule: source.decision_rule,
      dimensions: source.dimensions,
      environment_id: source.environment_id,
    });
    expect(copy.body.id).not.toBe(source.id);
    expect(copy.body.variants.map((v: any) => [v.key, v.weight, v.is_control])).toEqual(source.variants.map((v: any) => [v.key, v.weight, v.is_control]));
    const audit = await server().request('GET', `/v1/audit?target_id=${copy.body.id}`, { key });
    expect(audit.body.data).toEqual([
      expect.objectContaining({
        action: 'experiment.created',
        payload: expect.objectContaining({ duplicated_from: { id: source.id, key: 'checkout-copy', name: 'One-page checkout' } }),
      }),
    ]);

    const named = await server().request('POST', `/v1/experiments/${source.id}/duplicate`, { key, body: { key: 'checkout-copy-3', name: 'Checkout, again' } });
    expect(named.body.name).toBe('Checkout, again');
    const before = (await server().request('GET', '/v1/experiments?limit=200', { key })).body.data.length;
    const taken = await server().request('POST', `/v1/experiments/${source.id}/duplicate`, { key, body: { key: 'pricing' } });
    expect(taken.status).toBe(409);
    const badKey = await server().request('POST', `/v1/experiments/${source.id}/duplicate`, { key, body: { key: 'Not A Key' } });
    expect(badKey.status).toBe(422);
    expect(badKey.body.errors[0].pointer).toBe('/key');
    expect((await server().request('GET', '/v1/experiments?limit=200', { key })).body.data).toHaveLength(before);
  });

  it('answers 404 for an experiment of another workspace', async () => {
    const other = await server().bootstrap();
    const response = await server().request('POST', `/v1/experiments/${ids.pricing}/duplicate`, { key: other.key, body: { key: 'stolen' } });
    expect(response.status).toBe(404);
  });
});

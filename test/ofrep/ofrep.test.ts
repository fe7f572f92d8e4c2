import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { runningExperiment } from '../experiments/helpers.js';

describeEachDialect('OpenFeature Remote Evaluation Protocol', (server) => {
  let key: string;
  let clientKey: string;
  let environmentId: string;
  beforeAll(async () => {
    ({ key, environmentId } = await server().bootstrap());
    clientKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } })).body.key;
    await runningExperiment(server(), key, environmentId, { key: 'new-checkout' });
    await runningExperiment(server(), key, environmentId, { key: 'nl-only', audience: { attribute: 'country', op: 'eq', value: 'NL' } });
  });

  it('gives an OpenFeature client the same sticky variant as /v1/assign', async () => {
    // The real OpenFeature server SDK with the OFREP provider, pointed at this server.
    const provider = new OFREPProvider({ baseUrl: server().url, headers: [['Authorization', `Bearer ${clientKey}`]] });
    await OpenFeature.setProviderAndWait('verdict', provider);
    const client = OpenFeature.getClient('verdict');
    for (const unit of ['of-1', 'of-2', 'of-3', 'of-4']) {
      const details = await client.getStringDetails('new-checkout', 'fallback', { targetingKey: unit });
      const assigned = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'new-checkout', unit_id: unit } });
      expect(details.value).toBe(assigned.body.variant);
      expect(details.reason).toBe('SPLIT');
      expect(details.variant).toBe(assigned.body.variant);
      expect(details.errorCode).toBeUndefined();
    }
    const missing = await client.getStringDetails('no-such-flag', 'fallback', { targetingKey: 'of-1' });
    expect(missing).toMatchObject({ value: 'fallback', errorCode: 'FLAG_NOT_FOUND' });
    const noTarget = await client.getStringDetails('new-checkout', 'fallback', {});
    expect(noTarget).toMatchObject({ value: 'fallback', errorCode: 'TARGETING_KEY_MISSING' });
    const outside = await client.getStringDetails('nl-only', 'fallback', { targetingKey: 'of-9', country: 'US' });
    expect(outside).toMatchObject({ value: 'control', reason: 'DEFAULT' });
    await OpenFeature.clearProviders();
  });

  it('answers the OFREP error shapes over HTTP', async () => {
    const notFound = await server().request('POST', '/ofrep/v1/evaluate/flags/nope', { key: clientKey, body: { context: { targetingKey: 'u' } } });
    expect(notFound.status).toBe(404);
    expect(notFound.body).toEqual({ key: 'nope', errorCode: 'FLAG_NOT_FOUND', errorDetails: expect.any(String) });
    const noKey = await server().request('POST', '/ofrep/v1/evaluate/flags/new-checkout', { key: clientKey, body: { context: {} } });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toMatchObject({ key: 'new-checkout', errorCode: 'TARGETING_KEY_MISSING' });
    const big = await server().request('POST', '/ofrep/v1/evaluate/flags/new-checkout', {
      key: clientKey,
      body: { context: { targetingKey: 'u', blob: 'x'.repeat(5000) } },
    });
    expect(big.body.errorCode).toBe('INVALID_CONTEXT');
    expect((await server().request('POST', '/ofrep/v1/evaluate/flags/new-checkout', { body: { context: { targetingKey: 'u' } } })).status).toBe(401);
  });

  it('evaluates every running experiment in bulk', async () => {
    const bulk = await server().request('POST', '/ofrep/v1/evaluate/flags', { key: clientKey, body: { context: { targetingKey: 'bulk-1', country: 'NL' } } });
    expect(bulk.status).toBe(200);
    expect(bulk.body.flags.map((f: { key: string }) => f.key)).toEqual(['new-checkout', 'nl-only']);
    const single = await server().request('POST', '/v1/assign', { key, body: { experiment_key: 'nl-only', unit_id: 'bulk-1', context: { country: 'NL' } } });
    expect(bulk.body.flags[1].value).toBe(single.body.variant);
    const noKey = await server().request('POST', '/ofrep/v1/evaluate/flags', { key: clientKey, body: { context: {} } });
    expect(noKey.status).toBe(400);
    expect(noKey.body.errorCode).toBe('TARGETING_KEY_MISSING');
  });
});

import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, VerdictError, type VerdictClient } from '../../sdk/src/index.js';
import type { IngestSetup } from '../events/support.js';
import { countingFetch, ROOT, SDK_DIST, startExperiment, startSdkServer } from './support.js';

// The SDK's assignments against a real Verdict: the same answers as POST /v1/assign, one HTTP
// request for identical concurrent calls, none for a repeat.

describe('@verdict/sdk assignments', () => {
  let setup: IngestSetup;
  const checkout = `checkout-${Date.now()}`;
  const banner = `banner-${Date.now()}`;

  beforeAll(async () => {
    setup = await startSdkServer();
    await startExperiment(setup, checkout);
    await startExperiment(setup, banner, {
      variants: [
        { key: 'off', weight: 34 },
        { key: 'blue', weight: 33 },
        { key: 'red', weight: 33 },
      ],
    });
  });
  afterAll(async () => {
    await setup?.stopDrainer();
    await setup?.server.close();
  });

  function client(fetchImpl?: ReturnType<typeof countingFetch>['fetch']): VerdictClient {
    return createClient({ baseUrl: setup.server.url, apiKey: setup.clientKey, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  }

  async function direct(experimentKey: string, unitId: string) {
    const answer = await setup.server.request('POST', '/v1/assign', { key: setup.serverKey, body: { experiment_key: experimentKey, unit_id: unitId } });
    expect(answer.status).toBe(200);
    return answer.body;
  }

  it('is installed with the repository: @verdict/sdk resolves from the root to its built entry', async () => {
    const resolved = createRequire(path.join(ROOT, 'package.json')).resolve('@verdict/sdk');
    expect(resolved).toBe(path.join(SDK_DIST, 'index.js'));
    const built = await import(resolved);
    expect(typeof built.createClient).toBe('function');
  });

  it('returns what POST /v1/assign returns, whichever asks first', async () => {
    const sdk = client();
    for (let n = 0; n < 40; n += 1) {
      const unit = `user-${n}`;
      const experiment = n % 2 === 0 ? checkout : banner;
      if (n % 4 < 2) {
        const fromSdk = await sdk.assign(experiment, unit);
        expect(fromSdk).toEqual(await direct(experiment, unit));
      } else {
        const fromApi = await direct(experiment, unit);
        expect(await sdk.assign(experiment, unit)).toEqual(fromApi);
      }
    }
    await sdk.close();
  });

  it('sends one request for identical concurrent calls and none for a repeat', async () => {
    const counter = countingFetch();
    const sdk = client(counter.fetch);
    const answers = await Promise.all(Array.from({ length: 20 }, () => sdk.assign(checkout, 'coalesced-unit')));
    expect(counter.count('/v1/assign')).toBe(1);
    expect(new Set(answers.map((answer) => answer.variant)).size).toBe(1);
    expect(await sdk.assign(checkout, 'coalesced-unit')).toEqual(answers[0]);
    expect(counter.count('/v1/assign')).toBe(1);
    expect(answers[0]).toEqual(await direct(checkout, 'coalesced-unit'));
    await sdk.close();
  });

  it('assignMany uses /v1/assign/batch, lists unknown keys and fills the cache', async () => {
    const counter = countingFetch();
    const sdk = client(counter.fetch);
    const many = await sdk.assignMany([checkout, banner, 'no-such-experiment'], 'many-unit');
    expect(counter.count()).toBe(1);
    expect(counter.count('/v1/assign/batch')).toBe(1);
    expect(many.not_found).toEqual(['no-such-experiment']);
    expect(many.assignments[checkout]).toEqual(await direct(checkout, 'many-unit'));
    expect(many.assignments[banner]).toEqual(await direct(banner, 'many-unit'));
    expect(await sdk.assign(banner, 'many-unit')).toEqual(many.assignments[banner]);
    expect(counter.count()).toBe(1);
    await sdk.close();
  });

  it('a single call joins a batch under way for the same unit', async () => {
    const counter = countingFetch();
    const sdk = client(counter.fetch);
    const [many, single] = await Promise.all([sdk.assignMany([checkout, banner], 'joined-unit'), sdk.assign(banner, 'joined-unit')]);
    expect(single).toEqual(many.assignments[banner]);
    expect(counter.count()).toBe(1);
    await sdk.close();
  });

  it('logs a delayed exposure with logExposure', async () => {
    const sdk = client();
    const hidden = await sdk.assign(checkout, 'later-unit', undefined, { logExposure: false });
    expect(hidden.exposure_logged_at).toBeNull();
    await sdk.logExposure(checkout, 'later-unit', hidden.variant as string);
    const shown = await sdk.assign(checkout, 'later-unit');
    expect(shown.variant).toBe(hidden.variant);
    expect(shown.exposure_logged_at).toEqual(expect.any(String));
    expect(shown).toEqual(await direct(checkout, 'later-unit'));
    await sdk.close();
  });

  it('rejects with the problem when the server refuses', async () => {
    const sdk = client();
    const failure = await sdk.assign('no-such-experiment', 'u1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(VerdictError);
    expect(failure).toMatchObject({ kind: 'http', status: 404, problem: { status: 404 } });
    const wrongVariant = await sdk.logExposure(checkout, 'never-assigned', 'control').catch((error: unknown) => error);
    expect(wrongVariant).toMatchObject({ kind: 'http', status: 409 });
    const offline = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: setup.clientKey });
    await expect(offline.assign(checkout, 'u1')).rejects.toMatchObject({ kind: 'network' });
    await Promise.all([sdk.close(), offline.close()]);
  });
});

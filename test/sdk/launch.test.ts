import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../sdk/src/index.js';
import type { IngestSetup } from '../events/support.js';
import { startExperiment, startSdkServer } from './support.js';

// The SDK reports a launch with its reason, and a long-lived client's cached assignment gives way
// to the launched variant once it is older than assignmentCacheTtlMs.

describe('@verdict/sdk and a launched variant', () => {
  let setup: IngestSetup;
  const experimentKey = `launch-sdk-${Date.now()}`;

  beforeAll(async () => {
    setup = await startSdkServer();
    await startExperiment(setup, experimentKey);
  });
  afterAll(async () => {
    await setup?.stopDrainer();
    await setup?.server.close();
  });

  it('answers the launched variant with reason launched once the cached assignment is older than its TTL', async () => {
    const client = createClient({ baseUrl: setup.server.url, apiKey: setup.clientKey, assignmentCacheTtlMs: 5_000 });
    try {
      const before = await client.assign(experimentKey, 'sdk-unit');
      expect(before).toMatchObject({ reason: 'bucketed', assignment_id: expect.any(String) });
      const experiment = (await setup.server.request('GET', '/v1/experiments', { key: setup.serverKey })).body.data.find(
        (e: { key: string }) => e.key === experimentKey,
      );
      await setup.server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: setup.serverKey, body: { reason: 'won' } });
      const launched = await setup.server.request('POST', `/v1/experiments/${experiment.id}/launch`, { key: setup.serverKey, body: { variant_key: 'green' } });
      expect(launched.status).toBe(200);
      // Within the TTL the cached, stored assignment answers.
      expect(await client.assign(experimentKey, 'sdk-unit')).toEqual(before);
      await new Promise((resolve) => setTimeout(resolve, 5_100));
      expect(await client.assign(experimentKey, 'sdk-unit')).toEqual({
        experiment_key: experimentKey,
        unit_id: 'sdk-unit',
        variant: 'green',
        reason: 'launched',
      });
      const many = await client.assignMany([experimentKey], 'sdk-other');
      expect(many.assignments[experimentKey]).toMatchObject({ variant: 'green', reason: 'launched' });
    } finally {
      await client.close();
    }
  });
});

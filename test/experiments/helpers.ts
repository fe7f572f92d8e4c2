import type { TestServer } from '../support/server.js';

export function experimentBody(environmentId: string, overrides: Record<string, unknown> = {}) {
  return {
    environment_id: environmentId,
    key: `exp-${Math.random().toString(36).slice(2, 10)}`,
    name: 'Checkout button',
    hypothesis: 'A green button converts better',
    unit_type: 'user',
    variants: [
      { key: 'control', weight: 50 },
      { key: 'green', weight: 50 },
    ],
    ...overrides,
  };
}

/** Creates and starts an experiment through the API; returns the created body. */
export async function runningExperiment(server: TestServer, key: string, environmentId: string, overrides: Record<string, unknown> = {}) {
  const created = await server.request('POST', '/v1/experiments', { key, body: experimentBody(environmentId, overrides) });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  const started = await server.request('POST', `/v1/experiments/${created.body.id}/start`, { key });
  if (started.status !== 200) throw new Error(`start failed: ${started.status} ${started.text}`);
  return started.body;
}

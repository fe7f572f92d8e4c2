import type { BenchServer, Scenario } from '../lib/harness.js';
import { trackSingleEvent } from './events.js';

const POOL = 2_000;

async function api(server: BenchServer, method: string, path: string, body?: unknown) {
  const response = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${server.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

/** A running two-arm experiment, created and started through the API. */
async function startExperiment(server: BenchServer, key: string): Promise<void> {
  const environments = await api(server, 'GET', '/v1/environments');
  const experiment = await api(server, 'POST', '/v1/experiments', {
    environment_id: environments.data[0].id,
    key,
    name: key,
    hypothesis: 'benchmark',
    unit_type: 'user',
    variants: [
      { key: 'control', weight: 50 },
      { key: 'treatment', weight: 50 },
    ],
  });
  await api(server, 'POST', `/v1/experiments/${experiment.id}/start`);
}

function assignRequest(server: BenchServer, key: string, unitFor: (n: number) => string) {
  let n = 0;
  return {
    method: 'POST' as const,
    path: '/v1/assign',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ experiment_key: key, unit_id: unitFor(0) }),
    next: () => ({ body: JSON.stringify({ experiment_key: key, unit_id: unitFor(n++) }) }),
  };
}

/** A running experiment with a pool of units already assigned, and the requests that ask for them again. */
async function cachedHits(server: BenchServer, key: string) {
  await startExperiment(server, key);
  for (let i = 0; i < POOL; i += 100) {
    await Promise.all(Array.from({ length: 100 }, (_, j) => api(server, 'POST', '/v1/assign', { experiment_key: key, unit_id: `hit-${i + j}` })));
  }
  // Built once, so the load generator (on the same cores as the server) spends little per request.
  const bodies = Array.from({ length: POOL }, (_, n) => JSON.stringify({ experiment_key: key, unit_id: `hit-${(n * 7919) % POOL}` }));
  return { ...assignRequest(server, key, (n) => `hit-${n % POOL}`), next: undefined, bodies };
}

export const assignHit: Scenario = {
  name: 'assign.hit',
  description: `POST /v1/assign for units already assigned (a pool of ${POOL}): the sticky cache path`,
  prepare: (server) => cachedHits(server, 'bench-hit'),
};

/**
 * Cached hits while single events stream in on as many connections again: whether ingest's
 * commits and drains (SQLite: on the buffer's writer thread) hold up the answers that need no
 * database at all.
 */
export const assignHitBesideEvents: Scenario = {
  name: 'assign.hit+events',
  description: `${assignHit.name} while 32 more connections send single events (POST /v1/events)`,
  prepare: (server) => cachedHits(server, 'bench-hit-beside-events'),
  background: { name: trackSingleEvent.name, connections: 32, prepare: (server) => trackSingleEvent.prepare(server) },
};

export const assignMiss: Scenario = {
  name: 'assign.miss',
  description: 'POST /v1/assign for new units: bucketing, one stored assignment and one exposure per request',
  async prepare(server) {
    await startExperiment(server, 'bench-miss');
    const run = Date.now().toString(36);
    return assignRequest(server, 'bench-miss', (n) => `miss-${run}-${n}`);
  },
};

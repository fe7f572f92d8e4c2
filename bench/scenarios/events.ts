import type { BenchServer, Scenario } from '../lib/harness.js';

const BATCH_SIZE = 500;
// Unique across runs against the same data directory or Redis, so no event is a replay.
const runId = Date.now().toString(36);
let sequence = 0;

function event(unit: number) {
  sequence += 1;
  return { event_key: 'purchase', unit_id: `user-${unit}`, properties: { amount: 12.5, currency: 'EUR' }, client_event_id: `bench-${runId}-${sequence}` };
}

function headers(server: BenchServer): Record<string, string> {
  return { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' };
}

/** Sends `requests` requests from 32 connections so the route is compiled and warm before it is measured. */
async function warmUp(server: BenchServer, path: string, body: () => string, requests: number): Promise<void> {
  let left = requests;
  const lane = async () => {
    while (left-- > 0) await fetch(`${server.url}${path}`, { method: 'POST', headers: headers(server), body: body() }).then((r) => r.arrayBuffer());
  };
  await Promise.all(Array.from({ length: 32 }, lane));
}

async function bufferStatus(server: BenchServer) {
  const response = await fetch(`${server.url}/v1/events/buffer`, { headers: { authorization: `Bearer ${server.key}` } });
  return (await response.json()) as { kind: string; pending: number; max_pending: number };
}

/** The pending count right after the load and how long it took to drain: shows the drainer kept up. */
async function reportPending(server: BenchServer): Promise<string> {
  const after = await bufferStatus(server);
  const started = Date.now();
  while ((await bufferStatus(server)).pending > 0 && Date.now() - started < 60_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  return `buffer (${after.kind}): ${after.pending} pending right after the load (429 above ${after.max_pending}); empty ${seconds}s later`;
}

export const trackSingleEvent: Scenario = {
  name: 'events.single',
  description: 'POST /v1/events, one event per request, each with a new client_event_id (validate, dedupe, group commit to the buffer)',
  async prepare(server) {
    await warmUp(server, '/v1/events', () => JSON.stringify(event(sequence % 10_000)), 3_000);
    return {
      method: 'POST',
      path: '/v1/events',
      headers: headers(server),
      body: JSON.stringify(event(0)),
      next: () => ({ body: JSON.stringify(event(sequence % 10_000)) }),
    };
  },
  afterLoad: reportPending,
};

export const trackEventBatch: Scenario = {
  name: 'events.batch',
  description: `POST /v1/events/batch with ${BATCH_SIZE} events per request, each with a new client_event_id`,
  itemsPerRequest: BATCH_SIZE,
  async prepare(server) {
    const body = () => JSON.stringify({ events: Array.from({ length: BATCH_SIZE }, (_, i) => event(i)) });
    await warmUp(server, '/v1/events/batch', body, 40);
    return { method: 'POST', path: '/v1/events/batch', headers: headers(server), body: body(), next: () => ({ body: body() }) };
  },
  afterLoad: reportPending,
};

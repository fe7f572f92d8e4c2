// Outbound webhook endpoints through HTTP: CRUD, signed deliveries to a local receiver, rotation
// (two signatures), retries after a refused connection, a 500 and a timeout, redelivery, the test
// ping, and the endpoint disabled after three days of failures.
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Worker } from '../../src/jobs/worker.js';
import { describeEach } from '../support/describe-each.js';
import { freePort } from '../support/net.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ManualClock } from '../support/clock.js';
import { Receiver, signaturesIn, verifies } from './receiver.js';
import { auditOf, startWorker, waitFor } from './support.js';

const RETRY_BASE_MS = 150;
const TIMEOUT_MS = 400;
const outbound = { retryBaseMs: RETRY_BASE_MS, timeoutMs: TIMEOUT_MS, allowPrivateNetworks: true, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 };

async function createEndpoint(server: TestServer, key: string, body: Record<string, unknown>) {
  const created = await server.request('POST', '/v1/webhook-endpoints', { key, body: { event_types: ['*'], ...body } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function deliveries(server: TestServer, key: string, endpointId: string) {
  const listed = await server.request('GET', `/v1/webhook-endpoints/${endpointId}/deliveries`, { key });
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data as any[];
}

async function settled(server: TestServer, key: string, endpointId: string, deliveryId: string, status = 'succeeded') {
  return waitFor(
    async () => (await deliveries(server, key, endpointId)).find((item) => item.id === deliveryId && item.status === status),
    `delivery ${status}`,
  );
}

describeEach('outbound webhook endpoints', {}, ({ dialect }) => {
  let server: TestServer;
  let worker: Worker;
  let key: string;
  let receiver: Receiver;
  let url: string;

  beforeAll(async () => {
    server = await startTestServer(dialect, { config: { outbound, publicUrl: 'https://verdict.example.com' } });
    key = (await server.bootstrap()).key;
    worker = startWorker(server);
  });
  afterAll(async () => {
    await worker.stop(0);
    await server.close();
  });
  afterEach(async () => receiver?.close());

  async function newReceiver() {
    receiver = new Receiver();
    url = `http://127.0.0.1:${await receiver.listen()}/hooks`;
    return receiver;
  }

  it('creates, lists, reads, edits and deletes endpoints; the secret is shown once; each change is audit-logged', async () => {
    const created = await createEndpoint(server, key, {
      url: 'https://hooks.example.com/verdict',
      description: 'ops',
      event_types: ['experiment.srm_detected'],
    });
    expect(created.secret).toMatch(/^whsec_[0-9A-Za-z]{32,}$/);
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/verdict',
      description: 'ops',
      event_types: ['experiment.srm_detected'],
      enabled: true,
      format: 'verdict',
    });
    const read = await server.request('GET', `/v1/webhook-endpoints/${created.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    const listed = await server.request('GET', '/v1/webhook-endpoints', { key });
    expect(listed.body.data.map((item: any) => item.id)).toContain(created.id);
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);

    const patched = await server.request('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      key,
      body: { event_types: ['*'], format: 'slack', enabled: false },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ event_types: ['*'], format: 'slack', enabled: false });

    const deleted = await server.request('DELETE', `/v1/webhook-endpoints/${created.id}`, { key });
    expect(deleted.status).toBe(204);
    expect((await server.request('GET', `/v1/webhook-endpoints/${created.id}`, { key })).status).toBe(404);
    const actions = (await auditOf(server, key, `target_id=${created.id}`)).map((entry) => entry.action);
    expect(actions).toEqual(expect.arrayContaining(['webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.deleted']));
    expect(JSON.stringify(await auditOf(server, key, `target_id=${created.id}`))).not.toContain(created.secret);
  });

  it('refuses bad input with a problem naming the field, and hides other workspaces’ endpoints', async () => {
    const bad = await server.request('POST', '/v1/webhook-endpoints', { key, body: { url: 'ftp://x.example.com', event_types: ['experiment.exploded'] } });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    const pointers = (bad.body.errors as Array<{ pointer: string }>).map((error) => error.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/url', '/event_types/0']));
    const endpoint = await createEndpoint(server, key, { url: 'https://hooks.example.com/a' });
    const other = (await server.bootstrap('Other')).key;
    expect((await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: other })).status).toBe(404);
    expect((await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: other })).status).toBe(404);
    expect((await server.request('GET', '/v1/webhook-endpoints', { key: other })).body.data).toEqual([]);
    // Server keys only: a client key (the kind shipped in browsers and apps) neither reads nor changes endpoints.
    const client = (await server.request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } })).body.key;
    for (const [method, path] of [
      ['GET', '/v1/webhook-endpoints'],
      ['POST', '/v1/webhook-endpoints'],
      ['GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`],
      ['POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`],
    ] as const) {
      const body = method === 'POST' && path === '/v1/webhook-endpoints' ? { url: 'https://hooks.example.com/c', event_types: ['*'] } : undefined;
      const refused = await server.request(method, path, { key: client, ...(body ? { body } : {}) });
      expect(refused.status, `${method} ${path}`).toBe(403);
    }
  });

  it('delivers a signed ping: the receiver verifies Verdict-Signature with the documented algorithm', async () => {
    await newReceiver();
    const endpoint = await createEndpoint(server, key, { url });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    expect(ping.status, ping.text).toBe(202);
    const done = await settled(server, key, endpoint.id, ping.body.id);
    expect(done).toMatchObject({ attempts: 1, response_status: 200, response_body: 'answered 200', last_error: null, event_type: 'ping' });
    const [request] = receiver.received;
    const body = JSON.parse(request!.body);
    expect(body).toMatchObject({ id: ping.body.event_id, type: 'ping', workspace_id: endpoint.workspace_id });
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
    expect(request!.headers['verdict-event-id']).toBe(ping.body.event_id);
    expect(request!.headers['verdict-delivery-attempt']).toBe('1');
    expect(verifies(request!.headers['verdict-signature'], request!.body, endpoint.secret)).toBe(true);
    expect(verifies(request!.headers['verdict-signature'], request!.body, 'whsec_not_the_secret')).toBe(false);
    const t = Number(/t=(\d+)/.exec(String(request!.headers['verdict-signature']))?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
  });

  it('signs with both secrets for 24 hours after a rotation: a receiver with either verifies', async () => {
    await newReceiver();
    const endpoint = await createEndpoint(server, key, { url });
    const rotated = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    await settled(server, key, endpoint.id, ping.body.id);
    const [request] = receiver.received;
    const header = request!.headers['verdict-signature'];
    expect(signaturesIn(header)).toHaveLength(2);
    expect(verifies(header, request!.body, endpoint.secret)).toBe(true);
    expect(verifies(header, request!.body, rotated.body.secret)).toBe(true);
    expect((await auditOf(server, key, `target_id=${endpoint.id}`)).map((entry) => entry.action)).toContain('webhook_endpoint.secret_rotated');
  });

  it('retries after a refused connection, a 500 and a timeout, then succeeds, with the same event id', async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}/hooks`;
    const endpoint = await createEndpoint(server, key, { url });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    const refused = await waitFor(async () => (await deliveries(server, key, endpoint.id)).find((item) => item.attempts === 1), 'the first attempt');
    expect(refused).toMatchObject({ status: 'pending', response_status: null });
    expect(refused.last_error).toMatch(/ECONNREFUSED/);
    expect(Date.parse(refused.next_attempt_at)).toBeGreaterThan(Date.now() - 1_000);
    receiver = new Receiver();
    receiver.script.push(500, 'hang');
    await receiver.listen(port);
    const done = await settled(server, key, endpoint.id, ping.body.id);
    expect(receiver.received.length).toBe(3);
    expect(done.attempts).toBeGreaterThanOrEqual(4);
    expect(new Set(receiver.received.map((item) => item.headers['verdict-event-id']))).toEqual(new Set([ping.body.event_id]));
    const attempts = receiver.received.map((item) => Number(item.headers['verdict-delivery-attempt']));
    expect(attempts).toEqual([...attempts].sort((a, b) => a - b));
    expect(attempts[0]).toBeGreaterThanOrEqual(2);
    for (const item of receiver.received) expect(verifies(item.headers['verdict-signature'], item.body, endpoint.secret)).toBe(true);
  });

  it('records a 500 with the start of its body and a timeout with its reason', async () => {
    await newReceiver();
    receiver.script.push(500);
    const endpoint = await createEndpoint(server, key, { url });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    const failed = await waitFor(async () => (await deliveries(server, key, endpoint.id)).find((item) => item.attempts === 1), 'the 500');
    expect(failed).toMatchObject({ status: 'pending', response_status: 500, response_body: 'answered 500', last_error: 'answered 500' });
    await settled(server, key, endpoint.id, ping.body.id);
  });

  it('redelivers a delivered event: the same body and event id, the next attempt number', async () => {
    await newReceiver();
    const endpoint = await createEndpoint(server, key, { url });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    await settled(server, key, endpoint.id, ping.body.id);
    const again = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/${ping.body.id}/redeliver`, { key });
    expect(again.status, again.text).toBe(202);
    expect(again.body.status).toBe('pending');
    await waitFor(
      async () => (await deliveries(server, key, endpoint.id)).find((item) => item.attempts === 2 && item.status === 'succeeded'),
      'the redelivery',
    );
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(receiver.received[1]!.headers['verdict-delivery-attempt']).toBe('2');
    const unknown = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/deliveries/01ARZ3NDEKTSV4RRFFQ69G5FAV/redeliver`, { key });
    expect(unknown.status).toBe(404);
  });

  it('reads at most 1 KB of a response: a receiver answering 200 with an endless body is a success, its first 1 KB kept', async () => {
    await newReceiver();
    receiver.script.push('endless');
    const endpoint = await createEndpoint(server, key, { url });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    // Within the 400 ms deadline: a sender that read the whole body would time out and fail.
    const done = await settled(server, key, endpoint.id, ping.body.id);
    expect(done).toMatchObject({ attempts: 1, response_status: 200, last_error: null });
    expect(done.response_body).toBe('0123456789'.repeat(103).slice(0, 1024));
    expect(done.duration_ms).toBeLessThan(TIMEOUT_MS);
    // The sender hung up: what was written is what fits in the sockets' buffers, not the gigabyte on offer.
    expect(receiver.endlessBytesWritten).toBeLessThan(64 * 1024 * 1024);
  });

  it('answers 409 to a redelivery while an attempt is scheduled, and to one on a disabled endpoint', async () => {
    const endpoint = await createEndpoint(server, key, { url: `http://127.0.0.1:${await freePort()}/nobody` });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    const pending = await waitFor(async () => (await deliveries(server, key, endpoint.id)).find((item) => item.attempts >= 1), 'the first attempt');
    expect(pending.status).toBe('pending');
    expect(pending.next_attempt_at).not.toBeNull();
    const redeliver = `/v1/webhook-endpoints/${endpoint.id}/deliveries/${ping.body.id}/redeliver`;
    const scheduled = await server.request('POST', redeliver, { key });
    expect(scheduled.status, scheduled.text).toBe(409);
    expect(scheduled.headers.get('content-type')).toContain('application/problem+json');
    expect(scheduled.body.detail).toMatch(/already scheduled/);

    const disabled = await server.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key, body: { enabled: false } });
    expect(disabled.status, disabled.text).toBe(200);
    // Disabling fails what waited for a retry at once.
    const [failed] = await deliveries(server, key, endpoint.id);
    expect(failed).toMatchObject({ id: ping.body.id, status: 'failed', next_attempt_at: null, last_error: 'not retried: the endpoint was disabled' });
    const onDisabled = await server.request('POST', redeliver, { key });
    expect(onDisabled.status, onDisabled.text).toBe(409);
    expect(onDisabled.body.detail).toMatch(/disabled/);
    const redelivered = (await auditOf(server, key, `target_id=${endpoint.id}`)).filter((entry) => entry.action === 'webhook_endpoint.redelivered');
    expect(redelivered).toEqual([]);
  });

  it('posts Slack’s incoming-webhook JSON, unsigned, to a slack endpoint', async () => {
    await newReceiver();
    const endpoint = await createEndpoint(server, key, { url, format: 'slack' });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    await settled(server, key, endpoint.id, ping.body.id);
    const [request] = receiver.received;
    expect(request!.headers['verdict-signature']).toBeUndefined();
    const body = JSON.parse(request!.body);
    expect(typeof body.text).toBe('string');
    expect(body.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn' } });
  });
});

describeEach('outbound webhook endpoints failing for three days', {}, ({ dialect }) => {
  let server: TestServer;
  let worker: Worker;
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await startTestServer(dialect, { clock, config: { outbound } });
    worker = startWorker(server);
  });
  afterAll(async () => {
    await worker.stop(0);
    await server.close();
  });

  it('disables an endpoint whose attempts failed for three days, with an audit entry, and fails what was pending', async () => {
    const { key } = await server.bootstrap();
    const endpoint = await createEndpoint(server, key, { url: `http://127.0.0.1:${await freePort()}/gone` });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    await waitFor(async () => (await deliveries(server, key, endpoint.id)).find((item) => item.attempts === 1), 'the first attempt');
    expect((await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key })).body.failing_since).not.toBeNull();
    clock.advance(3 * 24 * 3600_000 + 1_000);
    worker.wake();
    const failed = await settled(server, key, endpoint.id, ping.body.id, 'failed');
    expect(failed.next_attempt_at).toBeNull();
    const read = await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key });
    expect(read.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('three days') });
    const disabled = (await auditOf(server, key, `target_id=${endpoint.id}`)).find((entry) => entry.action === 'webhook_endpoint.disabled');
    expect(disabled).toMatchObject({ actor_id: null });
    const ping2 = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key });
    expect(ping2.status).toBe(409);
  });
});

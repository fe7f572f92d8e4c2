// Without VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS, deliveries to loopback, link-local (cloud
// metadata) and names that resolve to them are refused at connect time; the endpoint is saved
// with a warning, and the refusal is a failed attempt with its reason. The receiver is real and
// listening on 127.0.0.1, so a delivery that got through would be seen.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Worker } from '../../src/jobs/worker.js';
import { describeEach } from '../support/describe-each.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { Receiver } from './receiver.js';
import { startWorker, waitFor } from './support.js';

describeEach('outbound webhooks refuse private addresses', {}, ({ dialect }) => {
  let server: TestServer;
  let worker: Worker;
  let key: string;
  const receiver = new Receiver();
  let port: number;

  beforeAll(async () => {
    server = await startTestServer(dialect, { config: { outbound: { retryBaseMs: 60_000, timeoutMs: 2_000, allowPrivateNetworks: false, dnsTimeoutMs: 2_000, maxEndpointsPerWorkspace: 20 } } });
    key = (await server.bootstrap()).key;
    worker = startWorker(server);
    port = await receiver.listen();
  });
  afterAll(async () => {
    await worker.stop(0);
    await receiver.close();
    await server.close();
  });

  it.each([
    ['loopback', () => `http://127.0.0.1:${port}/hook`, /127\.0\.0\.1 is a private/],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/hook`, /127\.0\.0\.1 is a private/],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a private/],
    ['a name resolving to loopback', () => `http://localhost:${port}/hook`, /localhost resolves to (127\.0\.0\.1|::1), a private/],
  ])('%s: warns at creation, and the delivery fails with the refusal, never reaching the receiver', async (_name, urlOf, reason) => {
    const before = receiver.received.length;
    const created = await server.request('POST', '/v1/webhook-endpoints', { key, body: { url: urlOf(), event_types: ['*'] } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings.join(' ')).toMatch(/VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1/);
    const ping = await server.request('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { key });
    expect(ping.status).toBe(202);
    const attempted = await waitFor(async () => {
      const listed = await server.request('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { key });
      return (listed.body.data as any[]).find((item) => item.attempts === 1);
    }, 'the attempt');
    expect(attempted.last_error).toMatch(/^refused: /);
    expect(attempted.last_error).toMatch(reason);
    expect(attempted).toMatchObject({ status: 'pending', response_status: null });
    expect(receiver.received.length).toBe(before);
  });
});

// Without VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS, deliveries to loopback, link-local (cloud
// metadata), the IPv6 forms that carry such an IPv4 address, and names that resolve to them are
// refused at connect time; the endpoint is saved with a warning, and the refusal is a failed
// attempt with its reason, which never names an address nor tells a missing name from a private
// one. The receiver is real and listening on 127.0.0.1, so a delivery that got through would be seen.
import dns from 'node:dns';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { useOutboundServer } from './outbound-server.js';
import { waitFor } from './support.js';

describeEach('outbound webhooks refuse private addresses', {}, ({ dialect }) => {
  const site = useOutboundServer(dialect, { allowPrivateNetworks: false });

  const PRIVATE = 'refused: a private, loopback, link-local or reserved address';
  const NO_PUBLIC = 'refused: the host has no public address (it does not resolve, or resolves to a private, loopback, link-local or reserved address)';

  async function firstAttempt(url: string) {
    const created = await site.server.request('POST', '/v1/webhook-endpoints', { key: site.key, body: { url, event_types: ['*'] } });
    expect(created.status, created.text).toBe(201);
    const ping = await site.server.request('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { key: site.key });
    expect(ping.status).toBe(202);
    const attempt = await waitFor(async () => {
      const listed = await site.server.request('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { key: site.key });
      return (listed.body.data as any[]).find((item) => item.attempts === 1);
    }, 'the attempt');
    return { warnings: created.body.warnings as string[], attempt };
  }

  it.each([
    ['loopback', () => `http://127.0.0.1:${site.port}/hook`],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${site.port}/hook`],
    ['IPv4-compatible loopback (::/96)', () => `http://[::127.0.0.1]:${site.port}/hook`],
    ['IPv4-translated loopback (::ffff:0:0:0/96)', () => `http://[::ffff:0:7f00:1]:${site.port}/hook`],
    ['NAT64 with a private IPv4 address embedded', () => `http://[64:ff9b::10.0.0.1]:${site.port}/hook`],
    ['local-use NAT64 (64:ff9b:1::/48)', () => `http://[64:ff9b:1::a00:1]:${site.port}/hook`],
    ['6to4 (2002::/16)', () => `http://[2002:7f00:1::1]:${site.port}/hook`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
  ])('%s: warns at creation, and the delivery fails with the refusal, never reaching the receiver', async (_name, urlOf) => {
    const before = site.receiver.received.length;
    const { warnings, attempt } = await firstAttempt(urlOf());
    expect(warnings).toEqual([`${PRIVATE}; deliveries to it are refused unless VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1`]);
    expect(attempt).toMatchObject({ status: 'pending', response_status: null, last_error: PRIVATE });
    expect(site.receiver.received.length).toBe(before);
  });

  it('says the same of a name that resolves to loopback and of one that does not exist, naming no address', async () => {
    const before = site.receiver.received.length;
    const loopback = await firstAttempt(`http://localhost:${site.port}/hook`);
    const missing = await firstAttempt(`http://no-such-host.invalid:${site.port}/hook`);
    expect(loopback.warnings).toEqual([`${NO_PUBLIC}; deliveries to it are refused unless VERDICT_WEBHOOK_ALLOW_PRIVATE_NETWORKS=1`]);
    expect(missing.warnings).toEqual(loopback.warnings);
    expect(loopback.attempt).toMatchObject({ status: 'pending', response_status: null, last_error: NO_PUBLIC });
    expect(missing.attempt.last_error).toBe(NO_PUBLIC);
    expect(site.receiver.received.length).toBe(before);
  });
});

describeEach('outbound webhooks give up on a slow DNS lookup', {}, ({ dialect }) => {
  // The resolver of this one name never answers, as a hung DNS server would: a real lookup of a
  // missing name can fail faster than any deadline, which would test the wrong refusal.
  const SLOW_NAME = 'slow-name.invalid';
  const site = useOutboundServer(dialect, { timeoutMs: 5_000, allowPrivateNetworks: false, dnsTimeoutMs: 200 });
  const realLookup = dns.lookup;
  beforeAll(() => {
    vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, ...rest: unknown[]) => {
      if (hostname === SLOW_NAME) return undefined;
      return (realLookup as (...args: unknown[]) => unknown)(hostname, ...rest);
    }) as typeof dns.lookup);
  });
  afterAll(() => vi.restoreAllMocks());

  it('fails the attempt with the lookup’s deadline as its reason', async () => {
    const created = await site.server.request('POST', '/v1/webhook-endpoints', {
      key: site.key,
      body: { url: `https://${SLOW_NAME}/hook`, event_types: ['*'] },
    });
    expect(created.status, created.text).toBe(201);
    await site.server.request('POST', `/v1/webhook-endpoints/${created.body.id}/test`, { key: site.key });
    const attempt = await waitFor(async () => {
      const listed = await site.server.request('GET', `/v1/webhook-endpoints/${created.body.id}/deliveries`, { key: site.key });
      return (listed.body.data as any[]).find((item) => item.attempts === 1);
    }, 'the attempt');
    expect(attempt).toMatchObject({ status: 'pending', response_status: null, last_error: "the host's DNS lookup took longer than 200 ms" });
  });
});

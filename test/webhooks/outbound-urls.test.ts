// Issue #51: an endpoint's URL is checked once, at the API's edge, and is a secret from then on.
// URLs that pass the schema's pattern but no URL parser accepts are a 422 pointing at /url (never
// a 500), and neither the answer nor the log quotes them; a URL is stored sealed, shown whole only
// in the answer that created the endpoint, and masked in reads, the list and the audit log; a
// workspace has at most VERDICT_WEBHOOK_MAX_ENDPOINTS endpoints; a receiver's reply with a NUL
// byte is stored (PostgreSQL's text refuses U+0000).
import { afterEach, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { useOutboundServer } from './outbound-server.js';
import { auditOf, waitFor } from './support.js';

const CAP = 4;
const outbound = { allowPrivateNetworks: true, maxEndpointsPerWorkspace: CAP };

const PASSWORD = 'S3cretPass';
const TOKEN = 'XoXoTokenNumber42';
// Each passes the schema's pattern (^https?://[^\s]+$) and each is refused by WHATWG URL parsing;
// with the override that allows private networks they were once stored, and every delivery failed.
const UNPARSABLE = [
  `https://user:${PASSWORD}@hooks.slack.com:99999/services/T0/B0/${TOKEN}`,
  `http://[::1/${TOKEN}`,
  `http://x:99999/${TOKEN}`,
  `http://a:b:c/${TOKEN}`,
  `http://%zz/${TOKEN}`,
  `http://xn--/${TOKEN}`,
  `http://ex%2Fample.com/${TOKEN}`,
  `http://[::1%25lo]:1/${TOKEN}`,
  `http://user:${PASSWORD}@host.example:0/${TOKEN}`,
];

describeEach('webhook endpoint URLs: checked at the edge, sealed and masked', {}, ({ dialect }) => {
  const lines: string[] = [];
  const site = useOutboundServer(dialect, outbound, { logLines: lines });
  afterEach(() => {
    site.receiver.script.length = 0;
  });

  async function create(body: Record<string, unknown>, as = site.key) {
    const created = await site.server.request('POST', '/v1/webhook-endpoints', { key: as, body: { event_types: ['*'], ...body } });
    expect(created.status, created.text).toBe(201);
    return created.body;
  }

  it('answers 422 pointing at /url, on POST and PATCH, to URLs no parser accepts; stores nothing, and neither the answer nor the log quotes them', async () => {
    const existing = await create({ url: `http://127.0.0.1:${site.port}/existing` });
    const auditBefore = (await auditOf(site.server, site.key, 'limit=200')).length;
    lines.length = 0;
    for (const url of UNPARSABLE) {
      for (const [method, path] of [
        ['POST', '/v1/webhook-endpoints'],
        ['PATCH', `/v1/webhook-endpoints/${existing.id}`],
      ] as const) {
        const answer = await site.server.request(method, path, { key: site.key, body: method === 'POST' ? { url, event_types: ['*'] } : { url } });
        expect(answer.status, `${method} ${url}: ${answer.text}`).toBe(422);
        expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(answer.body.errors).toEqual([expect.objectContaining({ pointer: '/url' })]);
        expect(answer.text).not.toContain(TOKEN);
        expect(answer.text).not.toContain(PASSWORD);
      }
    }
    const logged = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [PASSWORD, TOKEN, 'hooks.slack.com', '%zz', 'ex%2Fample']) expect(logged).not.toContain(secret);
    expect(logged).not.toMatch(/"level":50/);
    expect((await auditOf(site.server, site.key, 'limit=200')).length).toBe(auditBefore);
    const listed = await site.server.request('GET', '/v1/webhook-endpoints', { key: site.key });
    expect(listed.body.data.map((item: any) => item.id)).toEqual([existing.id]);
  });

  it('shows the whole URL once, at creation; reads, the list, edits and the audit log show it masked, and the row holds it sealed', async () => {
    const url = `http://user:${PASSWORD}@127.0.0.1:${site.port}/services/T0/B0/${TOKEN}`;
    const created = await create({ url });
    expect(created.url).toBe(url);
    const masked = `http://127.0.0.1:${site.port}/…er42`;
    const read = await site.server.request('GET', `/v1/webhook-endpoints/${created.id}`, { key: site.key });
    expect(read.body.url).toBe(masked);
    const listed = await site.server.request('GET', '/v1/webhook-endpoints', { key: site.key });
    expect(listed.body.data.find((item: any) => item.id === created.id).url).toBe(masked);
    const patched = await site.server.request('PATCH', `/v1/webhook-endpoints/${created.id}`, { key: site.key, body: { description: 'ops' } });
    expect(patched.body.url).toBe(masked);
    // A client that PATCHes back what it read sends the masked URL: the URL it stands for stays.
    const roundTrip = await site.server.request('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      key: site.key,
      body: { url: read.body.url, description: 'ops' },
    });
    expect(roundTrip.status, roundTrip.text).toBe(200);
    const stored = await site.server.ctx.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(TOKEN);
    expect(JSON.stringify(stored)).not.toContain(PASSWORD);

    // Deliveries go to the whole URL, credentials included.
    const ping = await site.server.request('POST', `/v1/webhook-endpoints/${created.id}/test`, { key: site.key });
    await waitFor(() => Promise.resolve(site.receiver.received.find((item) => item.path === `/services/T0/B0/${TOKEN}`)), 'the ping');
    const delivered = site.receiver.received.find((item) => item.path === `/services/T0/B0/${TOKEN}`);
    expect(delivered?.headers.authorization).toBe(`Basic ${Buffer.from(`user:${PASSWORD}`).toString('base64')}`);
    expect(ping.status).toBe(202);

    // A new URL: the answer and the audit entry's change show it masked; deliveries follow it.
    const moved = await site.server.request('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      key: site.key,
      body: { url: `http://127.0.0.1:${site.port}/moved/${TOKEN}-2` },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.url).toBe(`http://127.0.0.1:${site.port}/…42-2`);
    const same = await site.server.request('PATCH', `/v1/webhook-endpoints/${created.id}`, {
      key: site.key,
      body: { url: `http://127.0.0.1:${site.port}/moved/${TOKEN}-2` },
    });
    expect(same.status).toBe(200);
    await site.server.request('POST', `/v1/webhook-endpoints/${created.id}/test`, { key: site.key });
    await waitFor(() => Promise.resolve(site.receiver.received.find((item) => item.path === `/moved/${TOKEN}-2`)), 'the ping to the new URL');
    expect((await site.server.request('DELETE', `/v1/webhook-endpoints/${created.id}`, { key: site.key })).status).toBe(204);

    const entries = await auditOf(site.server, site.key, `target_id=${created.id}`);
    const updates = entries.filter((entry) => entry.action === 'webhook_endpoint.updated');
    // The unchanged URL changed nothing and logged nothing: a description, then a URL.
    expect(updates.map((entry) => Object.keys(entry.payload.changes))).toEqual(expect.arrayContaining([['description'], ['url']]));
    expect(updates).toHaveLength(2);
    expect(updates.find((entry) => entry.payload.changes.url)?.payload.changes.url).toEqual({ from: masked, to: `http://127.0.0.1:${site.port}/…42-2` });
    expect(entries.find((entry) => entry.action === 'webhook_endpoint.created')?.payload.url).toBe(masked);
    expect(entries.find((entry) => entry.action === 'webhook_endpoint.deleted')?.payload.url).toBe(`http://127.0.0.1:${site.port}/…42-2`);
    expect(JSON.stringify(entries)).not.toContain(TOKEN);
    expect(JSON.stringify(entries)).not.toContain(PASSWORD);
    expect(lines.join('\n')).not.toContain(TOKEN);
  });

  it(`refuses a workspace's endpoint past ${CAP} with a 409 problem that changes nothing; other workspaces are not counted`, async () => {
    const boot = await site.server.bootstrap('Capped');
    const made = [];
    for (let n = 0; n < CAP; n += 1) made.push(await create({ url: `https://hooks.example.com/${n}` }, boot.key));
    const refused = await site.server.request('POST', '/v1/webhook-endpoints', {
      key: boot.key,
      body: { url: 'https://hooks.example.com/over', event_types: ['*'] },
    });
    expect(refused.status, refused.text).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ type: 'https://verdict.dev/problems/endpoint-limit-reached', status: 409 });
    expect(refused.body.detail).toContain('VERDICT_WEBHOOK_MAX_ENDPOINTS');
    expect((await site.server.request('GET', '/v1/webhook-endpoints', { key: boot.key })).body.data).toHaveLength(CAP);
    expect((await auditOf(site.server, boot.key, 'action=webhook_endpoint.created')).length).toBe(CAP);
    // Another workspace still has room, and a deletion makes room again.
    await create({ url: 'https://hooks.example.com/elsewhere' }, (await site.server.bootstrap('Roomy')).key);
    expect((await site.server.request('DELETE', `/v1/webhook-endpoints/${made[0].id}`, { key: boot.key })).status).toBe(204);
    await create({ url: 'https://hooks.example.com/again' }, boot.key);
  });

  it('stores a reply that holds a NUL byte, the NUL kept as U+FFFD', async () => {
    const endpoint = await create({ url: `http://127.0.0.1:${site.port}/nul` });
    site.receiver.script.push({ status: 500, body: 'before\u0000after' });
    const ping = await site.server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: site.key });
    const attempted = await waitFor(async () => {
      const listed = await site.server.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: site.key });
      return (listed.body.data as any[]).find((item) => item.id === ping.body.id && item.attempts === 1);
    }, 'the attempt');
    expect(attempted).toMatchObject({ response_status: 500, response_body: 'before\ufffdafter', last_error: 'answered 500', status: 'pending' });
  });
});

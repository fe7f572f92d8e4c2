import http from 'node:http';
import { beforeAll, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import {
  createSource,
  describeWebhooks,
  drainAll,
  opensslSignature,
  postInbound,
  secondsOf,
  senderSignature,
  storedEvents,
  type WebhookEnv,
} from './support.js';

function expectProblem(response: { status: number; headers: Headers; body: any }, status: number, detail?: RegExp) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String) });
  if (detail) expect(response.body.detail).toMatch(detail);
}

describeWebhooks('inbound webhooks', (env: () => WebhookEnv) => {
  let source: Awaited<ReturnType<typeof createSource>>;
  const post = (body: unknown, options: Omit<Parameters<typeof postInbound>[3], 'body'> = {}) =>
    postInbound(env().server, env().clock, source.inbound_path, { secret: source.inbound_secret, body, ...options });

  beforeAll(async () => {
    source = await createSource(env().server, env().key, 'crm');
  });

  it('creates a source to deliver to', async () => {
    expect(source.inbound_path).toBe(`/webhooks/inbound/${env().workspaceId}/crm`);
    expect(source.inbound_secret).toMatch(/^whsec_[0-9A-Za-z]{43}$/);
  });

  it('ingests {events: [...]} signed with only the source secret into the events table', async () => {
    await drainAll(env().server); // what other tests left buffered is not this test's
    const before = (await storedEvents(env().server, env().workspaceId)).length;
    const response = await post({
      events: [
        { event_key: 'signup', unit_id: 'user-1', properties: { plan: 'pro' } },
        { event_key: 'purchase', unit_id: 'user-1', properties: { amount: 12.5 }, client_event_id: `inb-${newId()}` },
      ],
    });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ delivery_id: expect.any(String), accepted_count: 2, idempotent_replay_count: 0, rejected: [] });
    await drainAll(env().server);
    const events = (await storedEvents(env().server, env().workspaceId)).slice(before);
    expect(events.map((event) => [event.event_key, event.unit_id])).toEqual([
      ['signup', 'user-1'],
      ['purchase', 'user-1'],
    ]);
    expect(JSON.parse(events[1]!.properties)).toEqual({ amount: 12.5 });
  });

  it('ingests a single EventInput body, whatever the content type', async () => {
    await drainAll(env().server); // what other tests left buffered is not this test's
    const before = (await storedEvents(env().server, env().workspaceId)).length;
    const response = await post({ event_key: 'single', unit_id: 'user-2' }, { headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(202);
    expect(response.body.accepted_count).toBe(1);
    await drainAll(env().server);
    expect((await storedEvents(env().server, env().workspaceId)).slice(before).map((event) => event.event_key)).toEqual(['single']);
  });

  it('ingests a body sent with no content type at all', async () => {
    const raw = JSON.stringify({ event_key: 'bare', unit_id: 'user-2' });
    const t = secondsOf(env().clock);
    const headers = { 'x-service-signature': `t=${t},v1=${senderSignature(source.inbound_secret, t, raw)}`, 'content-length': Buffer.byteLength(raw) };
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(env().server.url + source.inbound_path, { method: 'POST', headers }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end(raw);
    });
    expect(status).toBe(202);
  });

  it('keeps JSON parsing and its 415 for the other routes', async () => {
    const response = await env().server.request('POST', '/v1/environments', {
      key: env().key,
      rawBody: 'name=Staging',
      headers: { 'content-type': 'text/plain' },
    });
    expectProblem(response, 415);
  });

  it('accepts a signature computed by openssl, and any one of several v1 values', async () => {
    const raw = JSON.stringify({ event_key: 'openssl', unit_id: 'user-3' });
    const t = secondsOf(env().clock);
    const v1 = opensslSignature(source.inbound_secret, t, raw);
    expect(v1).toBe(senderSignature(source.inbound_secret, t, raw));
    const wrong = senderSignature('whsec_other', t, raw);
    const response = await post(raw, { signature: `t=${t},v1=${wrong},v0=ignored,v1=${v1}` });
    expect(response.status).toBe(202);
  });

  it('verifies the Stripe test vector from the references over HTTP', async () => {
    // Give the source Stripe's example secret and stand the clock at the vector's time.
    await env()
      .server.ctx.db.updateTable('webhook_sources')
      .set({ secret_enc: env().server.ctx.secrets.seal('whsec_test_secret') })
      .where('id', '=', source.id)
      .execute();
    const saved = env().clock.current;
    env().clock.current = 1_700_000_000_000;
    try {
      const body = '{"id":"evt_test_webhook","object":"event"}';
      const v1 = 'd95c6b7477fbd7e9f90b1b0ef5f9c7ac25abca5382460e0d988c2b2a5b71b990';
      const signed = await post(body, { signature: `t=1700000000,v1=${v1}` });
      // The signature passes; Stripe's event is not an EventInput, so the body is refused after it.
      expectProblem(signed, 422);
      const tampered = await post(body.replace('evt_test', 'evt_fake'), { signature: `t=1700000000,v1=${v1}` });
      expectProblem(tampered, 401, /no v1 signature matches/);
    } finally {
      env().clock.current = saved;
      await env()
        .server.ctx.db.updateTable('webhook_sources')
        .set({ secret_enc: env().server.ctx.secrets.seal(source.inbound_secret) })
        .where('id', '=', source.id)
        .execute();
    }
  });

  it('answers 401 for a missing, malformed, expired, future or mismatched signature, saying which', async () => {
    const body = { event_key: 'x', unit_id: 'u' };
    const now = secondsOf(env().clock);
    const cases: Array<[Parameters<typeof post>[1], RegExp]> = [
      [{ signature: null }, /missing/],
      [{ signature: 'v1=abc' }, /malformed/],
      [{ signature: `t=${now},v1=not-hex` }, /malformed/],
      [{ t: now - 301 }, /more than 5 minutes old/],
      [{ t: now + 301 }, /more than 5 minutes in the future/],
      [{ secret: 'whsec_wrong' }, /no v1 signature matches/],
    ];
    for (const [options, detail] of cases) {
      const response = await post(body, options);
      expectProblem(response, 401, detail);
      expect(response.body.type).toBe('https://verdict.dev/problems/invalid-signature');
      expect(response.headers.get('www-authenticate')).toBeNull();
    }
    expect((await post(body, { t: now - 300 })).status).toBe(202);
    expect((await post(body, { t: now + 300 })).status).toBe(202);
  });

  it('answers 401 when the body is re-serialised after signing', async () => {
    const raw = '{"event_key": "spaced", "unit_id": "u"}';
    const t = secondsOf(env().clock);
    const response = await post(JSON.stringify(JSON.parse(raw)), { signature: `t=${t},v1=${senderSignature(source.inbound_secret, t, raw)}` });
    expectProblem(response, 401, /no v1 signature matches/);
  });

  it('answers 404 for an unknown or malformed workspace and an unknown slug', async () => {
    const body = { event_key: 'x', unit_id: 'u' };
    const paths = [`/webhooks/inbound/${newId()}/crm`, '/webhooks/inbound/not-a-ulid/crm', `/webhooks/inbound/${env().workspaceId}/nope`];
    for (const path of paths) {
      expectProblem(await postInbound(env().server, env().clock, path, { secret: source.inbound_secret, body }), 404);
    }
  });

  it('keeps tenants apart: another workspace’s id with this slug is 404', async () => {
    const other = await env().server.bootstrap('Other tenant');
    const theirs = await createSource(env().server, other.key, 'crm');
    const crossed = await postInbound(env().server, env().clock, `/webhooks/inbound/${other.workspaceId}/crm`, {
      secret: source.inbound_secret,
      body: { event_key: 'x', unit_id: 'u' },
    });
    expectProblem(crossed, 401);
    const mine = await env().server.request('GET', `/v1/webhook-sources/${theirs.id}`, { key: env().key });
    expectProblem(mine, 404);
  });

  it('answers 409 for a disabled source, after checking the signature', async () => {
    const disabled = await createSource(env().server, env().key, 'paused', { enabled: false });
    const body = { event_key: 'x', unit_id: 'u' };
    const signed = await postInbound(env().server, env().clock, disabled.inbound_path, { secret: disabled.inbound_secret, body });
    expectProblem(signed, 409, /disabled/);
    expect(signed.body.type).toBe('https://verdict.dev/problems/source-disabled');
    const unsigned = await postInbound(env().server, env().clock, disabled.inbound_path, { signature: null, body });
    expectProblem(unsigned, 401);
    await env().server.request('PATCH', `/v1/webhook-sources/${disabled.id}`, { key: env().key, body: { enabled: true } });
    expect((await postInbound(env().server, env().clock, disabled.inbound_path, { secret: disabled.inbound_secret, body })).status).toBe(202);
  });

  it('answers 400 for a body that is not JSON and 422 for one of the wrong shape', async () => {
    expectProblem(await post('{"event_key": '), 400, /not valid JSON/);
    expectProblem(await post(''), 400, /empty/);
    expectProblem(await post([{ event_key: 'x', unit_id: 'u' }]), 422, /one event object/);
    expectProblem(await post({ events: [] }), 422);
    expectProblem(await post({ events: Array.from({ length: 501 }, () => ({ event_key: 'x', unit_id: 'u' })) }), 422);
    const single = await post({ event_key: 'BAD KEY', unit_id: 'u' });
    expectProblem(single, 422);
    expect(single.body.errors).toEqual([{ pointer: '/event_key', message: expect.stringMatching(/pattern/) }]);
  });

  it('lists a bad event of a batch as rejected and accepts the rest', async () => {
    const response = await post({
      events: [
        { event_key: 'ok', unit_id: 'u' },
        { event_key: 'ok', unit_id: '' },
      ],
    });
    expect(response.status).toBe(202);
    expect(response.body.accepted_count).toBe(1);
    expect(response.body.rejected).toEqual([{ index: 1, reason: expect.stringContaining('/events/1/unit_id') }]);
  });

  it('records every delivery with its outcome, newest first, with a cursor', async () => {
    // One delivery of each outcome looked for below, so this test does not lean on the others.
    await post({ event_key: 'listed', unit_id: 'u-listed' });
    await post({ event_key: 'listed', unit_id: 'u-listed' }, { signature: `t=${secondsOf(env().clock)},v1=${'0'.repeat(64)}` });
    await post('{"event_key": ');
    await post({ events: [] });
    await post({
      events: [
        { event_key: 'ok', unit_id: 'u' },
        { event_key: 'ok', unit_id: '' },
      ],
    });
    const all = await env().server.request('GET', `/v1/webhook-sources/${source.id}/deliveries?limit=200`, { key: env().key });
    expect(all.status).toBe(200);
    const outcomes = new Set(all.body.data.map((delivery: any) => `${delivery.outcome}:${delivery.status_code}`));
    for (const expected of ['accepted:202', 'unauthorized:401', 'invalid:400', 'invalid:422']) expect(outcomes).toContain(expected);
    const ids = all.body.data.map((delivery: any) => delivery.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const batch = all.body.data.find((delivery: any) => delivery.rejected_count === 1);
    expect(batch).toMatchObject({ outcome: 'accepted', event_count: 2, accepted_count: 1, reason: null, idempotency_key: null });
    const refused = all.body.data.find((delivery: any) => delivery.status_code === 401);
    expect(refused.reason).toEqual(expect.any(String));

    const first = await env().server.request('GET', `/v1/webhook-sources/${source.id}/deliveries?limit=2`, { key: env().key });
    const second = await env().server.request('GET', `/v1/webhook-sources/${source.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, {
      key: env().key,
    });
    expect([...first.body.data, ...second.body.data].map((delivery: any) => delivery.id)).toEqual(ids.slice(0, 4));
    const unauthorized = await env().server.request('GET', `/v1/webhook-sources/${source.id}/deliveries?outcome=unauthorized`, { key: env().key });
    expect(unauthorized.body.data.length).toBeGreaterThan(0);
    expect(unauthorized.body.data.every((delivery: any) => delivery.outcome === 'unauthorized')).toBe(true);
  });
});

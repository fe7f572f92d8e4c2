import { beforeAll, expect, it } from 'vitest';
import { BufferUnavailableError, type BufferedEvent } from '../../src/buffer/types.js';
import { fingerprintOf, IN_FLIGHT_TIMEOUT_MS, purgeExpiredIdempotencyKeys } from '../../src/features/inbound/idempotency.js';
import type { TestServer } from '../support/server.js';
import { createSource, describeWebhooks, drainAll, HOUR_MS, postInbound, storedEvents, type WebhookEnv } from './support.js';

let sequence = 0;
function uniqueKey(label: string): string {
  sequence += 1;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${sequence}`;
}

/** Holds every buffer append until released, so a request stays in flight as long as the test wants. */
function holdAppends(server: TestServer): { entered: Promise<void>; release(): void; restore(): void } {
  const buffer = server.ctx.buffer;
  const original = buffer.append.bind(buffer);
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
  buffer.append = async (events: BufferedEvent[]) => {
    entered();
    await gate;
    return original(events);
  };
  return { entered: enteredPromise, release, restore: () => void (buffer.append = original) };
}

describeWebhooks('inbound idempotency keys', (env: () => WebhookEnv) => {
  let source: Awaited<ReturnType<typeof createSource>>;
  const send = (unitId: string, key?: string, extra: Partial<Parameters<typeof postInbound>[3]> = {}) =>
    postInbound(env().server, env().clock, source.inbound_path, {
      secret: source.inbound_secret,
      body: { event_key: 'idem', unit_id: unitId },
      ...(key === undefined ? {} : { idempotencyKey: key }),
      ...extra,
    });
  const storedFor = async (unitId: string) => {
    await drainAll(env().server);
    return (await storedEvents(env().server, env().workspaceId)).filter((event) => event.unit_id === unitId);
  };

  beforeAll(async () => {
    source = await createSource(env().server, env().key, 'idem');
  });

  it('answers a repeat with the original 202, re-signed or not, and ingests once', async () => {
    const key = uniqueKey('replay');
    const first = await send('u-replay', key);
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    env().clock.advance(60_000); // the sender retries a minute later with a fresh signature
    const again = await send('u-replay', key);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedFor('u-replay')).toHaveLength(1);
    const deliveries = await env().server.request('GET', `/v1/webhook-sources/${source.id}/deliveries?limit=2`, { key: env().key });
    expect(deliveries.body.data.map((delivery: any) => [delivery.outcome, delivery.idempotency_key, delivery.accepted_count])).toEqual([
      ['replayed', key, 0],
      ['accepted', key, 1],
    ]);
  });

  it('answers 422 for the same key with a different body', async () => {
    const key = uniqueKey('mismatch');
    expect((await send('u-body-a', key)).status).toBe(202);
    const other = await send('u-body-b', key);
    expect(other.status).toBe(422);
    expect(other.body.type).toBe('https://verdict.dev/problems/idempotency-key-reused');
    expect(await storedFor('u-body-b')).toHaveLength(0);
  });

  it('accepts keys up to 64 characters and answers 422 beyond', async () => {
    expect((await send('u-len-64', 'k'.repeat(64))).status).toBe(202);
    const tooLong = await send('u-len-65', 'k'.repeat(65));
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors).toEqual([{ parameter: 'Idempotency-Key', message: expect.stringContaining('1 to 64') }]);
    expect(await storedFor('u-len-65')).toHaveLength(0);
  });

  it('scopes keys to the source and to the workspace', async () => {
    const key = uniqueKey('scope');
    const sibling = await createSource(env().server, env().key, 'idem-sibling');
    const other = await env().server.bootstrap('Scope tenant');
    const foreign = await createSource(env().server, other.key, 'idem');
    const body = { event_key: 'idem', unit_id: 'u-scope' };
    for (const target of [source, sibling]) {
      const response = await postInbound(env().server, env().clock, target.inbound_path, { secret: target.inbound_secret, body, idempotencyKey: key });
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    const theirs = await postInbound(env().server, env().clock, foreign.inbound_path, { secret: foreign.inbound_secret, body, idempotencyKey: key });
    expect(theirs.status).toBe(202);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await storedFor('u-scope')).toHaveLength(2);
  });

  it('does not de-duplicate without a key', async () => {
    expect((await send('u-nokey')).status).toBe(202);
    expect((await send('u-nokey')).status).toBe(202);
    expect(await storedFor('u-nokey')).toHaveLength(2);
  });

  it('answers 409 while the first request is in flight, then the original response', async () => {
    const key = uniqueKey('inflight');
    const hold = holdAppends(env().server);
    try {
      const first = send('u-inflight', key);
      await hold.entered;
      const concurrent = await send('u-inflight', key);
      expect(concurrent.status).toBe(409);
      expect(concurrent.body.type).toBe('https://verdict.dev/problems/idempotency-key-in-flight');
      hold.release();
      expect((await first).status).toBe(202);
    } finally {
      hold.release();
      hold.restore();
    }
    const after = await send('u-inflight', key);
    expect(after.status).toBe(202);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(await storedFor('u-inflight')).toHaveLength(1);
  });

  it('forgets a key whose request failed before ingesting, so the retry goes through', async () => {
    const key = uniqueKey('failed');
    const buffer = env().server.ctx.buffer;
    const original = buffer.append.bind(buffer);
    buffer.append = async () => {
      throw new BufferUnavailableError('simulated outage');
    };
    try {
      expect((await send('u-failed', key)).status).toBe(503);
    } finally {
      buffer.append = original;
    }
    const retry = await send('u-failed', key);
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await storedFor('u-failed')).toHaveLength(1);
  });

  it('lets a repeat take over a claim abandoned by a process that died', async () => {
    const key = uniqueKey('abandoned');
    const now = env().clock.now();
    await env()
      .server.ctx.db.insertInto('webhook_idempotency_keys')
      .values({
        workspace_id: env().workspaceId,
        source_id: source.id,
        idempotency_key: key,
        // The fingerprint of the request below: it is a true repeat of the abandoned one.
        fingerprint: fingerprintOf(Buffer.from(JSON.stringify({ event_key: 'idem', unit_id: 'u-abandoned' }))),
        state: 'in_flight',
        lock_token: 'dead-process',
        locked_at: now,
        response_status: null,
        response_body: null,
        created_at: now,
        expires_at: now + 24 * HOUR_MS,
      })
      .execute();
    expect((await send('u-abandoned', key)).status).toBe(409);
    env().clock.advance(IN_FLIGHT_TIMEOUT_MS);
    const takeover = await send('u-abandoned', key);
    expect(takeover.status).toBe(202);
    expect(takeover.headers.get('idempotent-replayed')).toBeNull();
    expect((await send('u-abandoned', key)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('forgets a key after 24 hours: the next post proceeds, also with another body', async () => {
    const key = uniqueKey('expiry');
    expect((await send('u-expiry', key)).status).toBe(202);
    env().clock.advance(24 * HOUR_MS - 1);
    expect((await send('u-expiry', key)).headers.get('idempotent-replayed')).toBe('true');
    env().clock.advance(1);
    const fresh = await send('u-expiry', key);
    expect(fresh.status).toBe(202);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(await storedFor('u-expiry')).toHaveLength(2);
    env().clock.advance(24 * HOUR_MS);
    expect((await send('u-expiry-other', key)).status).toBe(202);
  });

  it('purges keys past their 24 hours', async () => {
    const key = uniqueKey('purge');
    expect((await send('u-purge', key)).status).toBe(202);
    env().clock.advance(24 * HOUR_MS);
    expect(await purgeExpiredIdempotencyKeys(env().server.ctx.db, env().clock.now())).toBeGreaterThanOrEqual(1);
    const left = await env().server.ctx.db.selectFrom('webhook_idempotency_keys').select('idempotency_key').execute();
    expect(left.map((row) => row.idempotency_key)).not.toContain(key);
  });

  it('ingests once when many copies with the same key arrive at the same moment', async () => {
    const key = uniqueKey('race');
    const answers = await Promise.all(Array.from({ length: 20 }, () => send('u-race', key)));
    for (const answer of answers) expect([202, 409]).toContain(answer.status);
    const originals = answers.filter((answer) => answer.status === 202 && answer.headers.get('idempotent-replayed') === null);
    expect(originals).toHaveLength(1);
    const replays = answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true');
    for (const replay of replays) expect(replay.body).toEqual(originals[0]!.body);
    expect(await storedFor('u-race')).toHaveLength(1);
  });
});

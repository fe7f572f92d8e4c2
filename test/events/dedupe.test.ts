import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { redisKeys } from '../../src/buffer/redis-scripts.js';
import { DEDUPE_WINDOW_MS } from '../../src/buffer/types.js';
import { ingestEvents } from '../../src/features/events/service.js';
import { ManualClock } from '../support/clock.js';
import { startTestServer } from '../support/server.js';
import { describeIngest, drained, storedEvents, uniqueEventId, waitFor } from './support.js';

describeIngest('event de-duplication', (setup) => {
  const track = (body: unknown) => setup().server.request('POST', '/v1/events', { key: setup().clientKey, body });

  it('answers a repeated client_event_id with idempotent_replay and stores the event once', async () => {
    const id = uniqueEventId();
    const first = await track({ event_key: 'purchase', unit_id: 'u1', client_event_id: id });
    const again = await track({ event_key: 'purchase', unit_id: 'u1', client_event_id: id });
    expect(first.body).toEqual({ accepted: true, idempotent_replay: false });
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ accepted: true, idempotent_replay: true });
    await drained(setup().server);
    const third = await track({ event_key: 'purchase', unit_id: 'u1', client_event_id: id });
    expect(third.body.idempotent_replay).toBe(true);
    await drained(setup().server);
    expect((await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.client_event_id === id)).toHaveLength(1);
  });

  it('keeps one of many copies sent at the same moment', async () => {
    const id = uniqueEventId('race');
    const answers = await Promise.all(Array.from({ length: 25 }, () => track({ event_key: 'race', unit_id: 'u2', client_event_id: id })));
    expect(answers.every((answer) => answer.status === 202)).toBe(true);
    expect(answers.filter((answer) => answer.body.idempotent_replay === false)).toHaveLength(1);
    await drained(setup().server);
    expect((await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.client_event_id === id)).toHaveLength(1);
  });

  it('scopes client_event_id to the workspace', async () => {
    const other = await setup().server.bootstrap('Other');
    const id = uniqueEventId('shared');
    const mine = await track({ event_key: 'k', unit_id: 'u', client_event_id: id });
    const theirs = await setup().server.request('POST', '/v1/events', { key: other.key, body: { event_key: 'k', unit_id: 'u', client_event_id: id } });
    expect(mine.body.idempotent_replay).toBe(false);
    expect(theirs.body.idempotent_replay).toBe(false);
    await drained(setup().server);
    expect((await storedEvents(setup().server, other.workspaceId)).map((row) => row.client_event_id)).toEqual([id]);
  });

  it('keeps one copy when two processes receive it concurrently', async () => {
    // A second server on the same database (and the same Redis prefix) stands in for another process.
    const { server } = setup();
    const second = await startTestServer(setup().dialect, {
      database: server.database,
      config: { buffer: server.ctx.config.buffer, events: server.ctx.config.events },
    });
    try {
      const ids = Array.from({ length: 20 }, () => uniqueEventId('two'));
      const send = (target: typeof server, id: string) =>
        target.request('POST', '/v1/events/batch', { key: setup().clientKey, body: { events: [{ event_key: 'k', unit_id: 'u', client_event_id: id }] } });
      const answers = await Promise.all(ids.flatMap((id) => [send(server, id), send(second, id)]));
      expect(answers.every((answer) => answer.status === 202)).toBe(true);
      const replays = answers.reduce((sum, answer) => sum + answer.body.idempotent_replay_count, 0);
      expect(replays).toBe(ids.length);
      await drained(server);
      const stored = (await storedEvents(server, setup().workspaceId)).filter((row) => ids.includes(row.client_event_id ?? ''));
      expect(stored).toHaveLength(ids.length);
    } finally {
      await second.close();
    }
  });

  it('offers the pipeline to other slices: ingestEvents validates, de-duplicates and buffers', async () => {
    const id = uniqueEventId('slice');
    const outcomes = await ingestEvents(setup().server.ctx, setup().workspaceId, [
      { event_key: 'webhook.event', unit_id: 'u', client_event_id: id },
      { event_key: 'webhook.event', unit_id: 'u', client_event_id: id },
      { event_key: 'Bad', unit_id: 'u' },
    ]);
    expect(outcomes).toEqual([{ status: 'accepted' }, { status: 'replay' }, { status: 'rejected', reason: expect.stringMatching(/event_key/) }]);
    await drained(setup().server);
    expect((await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.client_event_id === id)).toHaveLength(1);
  });

  it('keeps a key in Redis for 30 days', async () => {
    if (setup().mode !== 'redis') return;
    const id = uniqueEventId('ttl');
    await track({ event_key: 'k', unit_id: 'u', client_event_id: id });
    const config = setup().server.ctx.config.buffer;
    if (config.kind !== 'redis') throw new Error('expected the Redis buffer');
    const redis = new Redis(config.url);
    const ttl = await redis.ttl(redisKeys(config.prefix).dedupe(setup().workspaceId, id));
    await redis.quit();
    expect(ttl).toBeGreaterThan(DEDUPE_WINDOW_MS / 1000 - 60);
    expect(ttl).toBeLessThanOrEqual(DEDUPE_WINDOW_MS / 1000);
  });

  it('purges expired keys in the embedded buffer', async () => {
    if (setup().mode !== 'embedded') return;
    const id = uniqueEventId('purge');
    await track({ event_key: 'k', unit_id: 'u', client_event_id: id });
    const { buffer } = setup().server.ctx;
    expect(await buffer.purgeExpiredKeys(Date.now())).toBe(0);
    expect(await buffer.purgeExpiredKeys(Date.now() + DEDUPE_WINDOW_MS + 60_000)).toBeGreaterThanOrEqual(1);
  });
});

const clock = new ManualClock();

describeIngest(
  'client_event_id after its 30 days',
  (setup) => {
    const track = (body: unknown) => setup().server.request('POST', '/v1/events', { key: setup().clientKey, body });

    /** What the key's expiry does in each buffer: Redis drops it by TTL; the embedded table keeps it until a purge. */
    async function expireInRedis(id: string): Promise<void> {
      const config = setup().server.ctx.config.buffer;
      if (config.kind !== 'redis') return;
      const redis = new Redis(config.url);
      await redis.del(redisKeys(config.prefix).dedupe(setup().workspaceId, id));
      await redis.quit();
    }

    it('is a replay for 30 days, then a new event that is stored beside the old one', async () => {
      const id = uniqueEventId('reuse');
      const first = await track({ event_key: 'k', unit_id: 'u', client_event_id: id, properties: { n: 1 } });
      expect(first.body.idempotent_replay).toBe(false);
      await drained(setup().server);

      clock.advance(DEDUPE_WINDOW_MS - 60_000);
      const within = await track({ event_key: 'k', unit_id: 'u', client_event_id: id, properties: { n: 2 } });
      expect(within.body.idempotent_replay).toBe(true);

      clock.advance(2 * 60_000);
      await expireInRedis(id);
      // The embedded key is past its expiry but not purged: it must not count any more.
      const after = await track({ event_key: 'k', unit_id: 'u', client_event_id: id, properties: { n: 3 } });
      expect(after.status).toBe(202);
      expect(after.body.idempotent_replay).toBe(false);
      await drained(setup().server);

      const stored = (await storedEvents(setup().server, setup().workspaceId)).filter((row) => row.event_key === 'k' && row.unit_id === 'u');
      expect(stored.map((row) => JSON.parse(row.properties).n)).toEqual([1, 3]);
      // The id now names the new event; the old one gave it up.
      expect(stored.map((row) => row.client_event_id)).toEqual([null, id]);
      const again = await track({ event_key: 'k', unit_id: 'u', client_event_id: id, properties: { n: 4 } });
      expect(again.body.idempotent_replay).toBe(true);
    });
  },
  { server: { clock } },
);

describeIngest(
  'back-pressure',
  (setup) => {
    it('answers 429 with Retry-After above the pending limit, and 202 again once drained', async () => {
      const { server, clientKey } = setup();
      const track = () => server.request('POST', '/v1/events', { key: clientKey, body: { event_key: 'fill', unit_id: 'u' } });
      let full: Awaited<ReturnType<typeof track>> | undefined;
      for (let sent = 0; sent < 40 && !full; sent++) {
        const answer = await track();
        if (answer.status === 429) full = answer;
        else expect(answer.status).toBe(202);
      }
      expect(full, 'no 429 after 40 events with a limit of 10').toBeDefined();
      expect(full!.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(full!.headers.get('content-type')).toMatch(/problem\+json/);
      expect(full!.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
      const batch = await server.request('POST', '/v1/events/batch', { key: clientKey, body: { events: [{ event_key: 'fill', unit_id: 'u' }] } });
      expect(batch.status).toBe(429);
      const status = await server.request('GET', '/v1/events/buffer', { key: setup().serverKey });
      expect(status.body.pending).toBeGreaterThan(10);

      setup().startDrainer();
      await drained(server);
      await waitFor(async () => (await track()).status === 202, 5_000, '202 after draining');
      const stored = (await storedEvents(server, setup().workspaceId)).filter((row) => row.event_key === 'fill');
      expect(stored.length).toBeGreaterThan(10);
    });
  },
  { drain: false, events: { maxPending: 10 } },
);

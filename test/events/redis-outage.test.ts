import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { startTestServer } from '../support/server.js';
import { privateRedis, startIngestServer, testIngestConfig, uniquePrefix, waitFor, type IngestSetup, type PrivateRedis } from './support.js';

// A Redis of the test's own, so stopping it disturbs nobody else. Gated like every Redis test.
describeEach('Redis buffer outage', { buffers: ['redis'] }, ({ dialect }) => {
  let redis: PrivateRedis;
  let setup: IngestSetup;
  beforeAll(async () => {
    redis = await privateRedis();
    setup = await startIngestServer(dialect, 'redis', { config: { buffer: { kind: 'redis', url: redis.url, prefix: uniquePrefix() } } });
  });
  afterAll(async () => {
    await setup?.stopDrainer();
    await setup?.server.close();
    await redis?.remove();
  });

  // Every test starts with Redis up and the server connected to it again: after the other test
  // restarts Redis, the server's client may still be reconnecting.
  beforeEach(async () => {
    await waitFor(
      async () => (await setup.server.request('GET', '/v1/events/buffer', { key: setup.serverKey })).status === 200,
      15_000,
      'the server to reach Redis',
    );
  });

  const track = (unit: string) =>
    setup.server.request('POST', '/v1/events', { key: setup.clientKey, body: { event_key: 'outage', unit_id: unit, client_event_id: unit } });

  it('answers 503 fast while Redis is down and 202 again once it is back, without a restart', async () => {
    expect((await track('before')).status).toBe(202);

    await redis.stop();
    const started = Date.now();
    const down = await track('during');
    expect(down.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(down.headers.get('content-type')).toMatch(/problem\+json/);
    expect(down.body).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(down.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect((await setup.server.request('GET', '/v1/events/buffer', { key: setup.serverKey })).status).toBe(503);

    await redis.start();
    await waitFor(async () => (await track('after')).status === 202, 15_000, '202 after Redis came back');

    // Everything acknowledged, before and after the outage, reaches the events table.
    const stored = await waitFor(
      async () => {
        const rows = await setup.server.ctx.db.selectFrom('events').select('unit_id').where('event_key', '=', 'outage').execute();
        const units = rows.map((row) => row.unit_id);
        return units.includes('before') && units.includes('after') && units;
      },
      15_000,
      'the acknowledged events to be stored',
    );
    expect(stored).not.toContain('during');
  });

  it('starts while Redis is down, answers 503, and serves once Redis comes up', async () => {
    await redis.stop();
    const late = await startTestServer(dialect, {
      database: setup.server.database,
      config: { buffer: setup.server.ctx.config.buffer, events: setup.server.ctx.config.events },
    });
    try {
      const send = () => late.request('POST', '/v1/events', { key: setup.clientKey, body: { event_key: 'outage', unit_id: 'cold-start' } });
      expect((await send()).status).toBe(503);
      await redis.start();
      await waitFor(async () => (await send()).status === 202, 15_000, '202 once Redis is up');
    } finally {
      await late.close();
    }
  });
});

describeEach('Redis durability check', { dialects: ['sqlite'], buffers: ['redis'] }, () => {
  it('warns at start-up when Redis runs without AOF', async () => {
    const redis = await privateRedis({ appendonly: 'no' });
    const logLines: string[] = [];
    const server = await startTestServer('sqlite', {
      logLines,
      config: { buffer: { kind: 'redis', url: redis.url, prefix: uniquePrefix() }, events: testIngestConfig },
    });
    try {
      await server.ctx.buffer.open();
      await waitFor(async () => logLines.some((line) => line.includes('appendonly no')), 5_000, 'the AOF warning');
    } finally {
      await server.close();
      await redis.remove();
    }
  });
});

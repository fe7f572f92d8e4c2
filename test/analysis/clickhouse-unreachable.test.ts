import net from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { ClickHouse } from '../../src/clickhouse/client.js';
import { isClickHouseUnreachable, migrateWhenReachable } from '../../src/clickhouse/reachability.js';
import { startEventDrainer } from '../../src/features/events/background.js';
import { startTestServer } from '../support/server.js';
import { createExperiment, createMetric } from './support.js';

/**
 * Issue #34: "ingest never waits on ClickHouse". A ClickHouse server that is away when Verdict
 * starts does not stop the start: events are acknowledged and wait in the buffer, a snapshot
 * answers 503 (not 500), and the migration is retried until the server answers.
 */

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a ClickHouse server that cannot be reached at start-up', () => {
  it('starts anyway: events wait in the buffer, a snapshot answers 503 with Retry-After', { timeout: 60_000 }, async () => {
    const url = `http://default@127.0.0.1:${await closedPort()}/verdict`;
    const clickhouse = loadConfig({ VERDICT_CLICKHOUSE_URL: url }).clickhouse;
    const logLines: string[] = [];
    const server = await startTestServer('sqlite', { config: { clickhouse }, logLines, skipClickHouseMigration: true });
    const drainer = startEventDrainer(server.ctx);
    try {
      expect(logLines.some((line) => line.includes('ClickHouse cannot be reached'))).toBe(true);
      const { key, environmentId } = await server.bootstrap('ClickHouse away');
      const sent = await server.request('POST', '/v1/events', { key, body: { event_key: 'buy', unit_id: 'u1' } });
      expect(sent.status).toBe(202);
      // The drainer tries and fails: the event stays buffered, acknowledged and not lost.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await server.ctx.buffer.status()).pending).toBe(1);

      const metric = await createMetric(server, key, { key: 'bought', event_key: 'buy', kind: 'binary' });
      const experiment = await createExperiment(server, key, {
        environment_id: environmentId,
        key: 'away',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
        primary_metric_id: metric,
      });
      const computed = await server.request('POST', `/v1/experiments/${experiment.id}/results/compute`, { key });
      expect(computed.status, computed.text).toBe(503);
      expect(computed.headers.get('content-type')).toContain('application/problem+json');
      expect(computed.headers.get('retry-after')).not.toBeNull();
    } finally {
      await drainer.stop();
      await server.close();
    }
  });
});

describe('migrateWhenReachable', () => {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
  const clickhouse = {} as ClickHouse;

  it('tells a server that cannot be reached from one that refused a query', () => {
    expect(isClickHouseUnreachable(refused())).toBe(true);
    expect(isClickHouseUnreachable(new Error('wrapped', { cause: refused() }))).toBe(true);
    expect(isClickHouseUnreachable(Object.assign(new Error('Code: 516. Authentication failed'), { code: '516' }))).toBe(false);
  });

  it('retries while the server cannot be reached and migrates once it answers', async () => {
    let calls = 0;
    const migrated = new Promise<void>((resolve) => {
      void migrateWhenReachable(
        clickhouse,
        async () => {
          calls += 1;
          if (calls < 3) throw refused();
          resolve();
          return ['0001_events_and_exposures'];
        },
        pino({ level: 'silent' }),
        { delaysMs: [10, 20] },
      );
    });
    await migrated;
    expect(calls).toBe(3);
  });

  it('fails the start on any other error, and stops retrying when told', async () => {
    const denied = Object.assign(new Error('Code: 516. Authentication failed'), { code: '516' });
    await expect(migrateWhenReachable(clickhouse, () => Promise.reject(denied), pino({ level: 'silent' }))).rejects.toBe(denied);
    let calls = 0;
    const retries = await migrateWhenReachable(
      clickhouse,
      () => {
        calls += 1;
        return Promise.reject(refused());
      },
      pino({ level: 'silent' }),
      { delaysMs: [10] },
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    retries.stop();
    const stoppedAt = calls;
    expect(stoppedAt).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toBe(stoppedAt);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/db/database.js';
import { uniquePrefix, waitFor } from '../events/support.js';
import { describeEach } from '../support/describe-each.js';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from '../scaled/private-postgres.js';
import { freePort } from '../support/net.js';
import { scrape, type Exposition } from '../support/prometheus.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** A scrape, and how long it took. */
async function timedScrape(url: string): Promise<{ exposition: Exposition; ms: number }> {
  const started = Date.now();
  const exposition = await scrape(url);
  return { exposition, ms: Date.now() - started };
}

/** The state letter of /proc/PID/stat (R running, S sleeping, T stopped, ...). */
function processState(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/** True when a Redis on the port answers PING (a raw RESP exchange, no client left behind). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** A redis-server of the test's own, so it can be frozen (SIGSTOP) without disturbing anyone. */
async function frozenableRedis(): Promise<{ url: string; child: ChildProcess; dir: string }> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(() => answersPing(port), 10_000, 'redis-server to answer');
  return { url, child, dir };
}

describeEach('GET /metrics while the Redis event buffer hangs', { dialects: ['sqlite'], buffers: ['redis'] }, () => {
  let redis: { url: string; child: ChildProcess; dir: string };
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    redis = await frozenableRedis();
    server = await startTestServer('sqlite', { config: { buffer: { kind: 'redis', url: redis.url, prefix: uniquePrefix() } } });
    await server.ctx.buffer.open();
    ({ key } = await server.bootstrap());
  });

  afterAll(async () => {
    redis?.child.kill('SIGCONT');
    await server?.close();
    redis?.child.kill('SIGTERM');
    if (redis) fs.rmSync(redis.dir, { recursive: true, force: true });
  });

  it('still answers within a few seconds, says the buffer cannot be read, and recovers once Redis answers again', async () => {
    const events = Array.from({ length: 3 }, (_, i) => ({ event_key: 'down', unit_id: `u-${i}` }));
    expect((await server.request('POST', '/v1/events/batch', { key, body: { events } })).status).toBe(202);
    const up = await scrape(server.url);
    expect(up.get('verdict_buffer_pending_events')).toBe(3);
    expect(up.get('verdict_metrics_source_up', { source: 'buffer' })).toBe(1);

    // Frozen, Redis accepts the connection's bytes and never answers: only the timeout ends the read.
    redis.child.kill('SIGSTOP');
    await waitFor(async () => processState(redis.child.pid as number) === 'T', 5_000, 'redis-server to be stopped');
    for (let scrapeWhileFrozen = 0; scrapeWhileFrozen < 2; scrapeWhileFrozen++) {
      const { exposition: down, ms } = await timedScrape(server.url);
      expect(ms).toBeGreaterThanOrEqual(1_900);
      expect(ms).toBeLessThan(4_500);
      expect(down.get('verdict_metrics_source_up', { source: 'buffer' })).toBe(0);
      expect(down.get('verdict_metrics_source_up', { source: 'database' })).toBe(1);
      // The last value read, not a misleading 0.
      expect(down.get('verdict_buffer_pending_events')).toBe(3);
    }

    redis.child.kill('SIGCONT');
    await waitFor(async () => (await scrape(server.url)).get('verdict_metrics_source_up', { source: 'buffer' }) === 1, 20_000, 'the buffer read to work again');
  });
});

const withPostgres = Boolean(process.env.VERDICT_TEST_DATABASE_URL) && privatePostgresAvailable();

describe.runIf(withPostgres)('GET /metrics while PostgreSQL is down', () => {
  let postgres: PrivatePostgres;
  let server: TestServer;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-metrics-pg-'));

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    const config = { kind: 'postgres' as const, url: postgres.url };
    await migrateDatabase(config);
    server = await startTestServer('postgres', { database: { config, dataDir, drop: async () => undefined } });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    postgres?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('still answers within a few seconds, says the database cannot be read, and recovers once it is back', async () => {
    const up = await scrape(server.url);
    expect(up.get('verdict_metrics_source_up', { source: 'database' })).toBe(1);
    expect(up.get('verdict_job_queue_depth', { lane: 'general' })).toBe(0);

    postgres.stop();
    const { exposition: down, ms } = await timedScrape(server.url);
    expect(ms).toBeLessThan(4_500);
    expect(down.get('verdict_metrics_source_up', { source: 'database' })).toBe(0);
    expect(down.get('verdict_job_queue_depth', { lane: 'general' })).toBe(0);
    // Requests are still counted while the database is away.
    expect(down.names).toContain('verdict_http_requests_total');

    postgres.start();
    await waitFor(
      async () => (await scrape(server.url)).get('verdict_metrics_source_up', { source: 'database' }) === 1,
      20_000,
      'the database read to work again',
    );
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { BufferConfig, Config, EventIngestConfig } from '../../src/config.js';
import type { Drainer } from '../../src/buffer/drainer.js';
import { startEventDrainer } from '../../src/features/events/background.js';
import type { DialectName } from '../support/databases.js';
import { describeEach, testRedisUrl, type BufferMode } from '../support/describe-each.js';
import { startTestServer, type TestServer, type TestServerOptions } from '../support/server.js';
import { accepts, freePort } from '../support/net.js';
import { waitFor } from '../support/wait-for.js';

export { freePort, waitFor };

export { testRedisUrl, type BufferMode };

/** A key prefix of its own, so test files running in parallel never see each other's streams. */
export function uniquePrefix(): string {
  return `verdict-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`;
}

export function bufferConfig(mode: BufferMode, url = testRedisUrl()): BufferConfig {
  if (mode === 'embedded') return { kind: 'embedded' };
  if (!url) throw new Error('Redis mode needs VERDICT_TEST_REDIS_URL');
  return { kind: 'redis', url, prefix: uniquePrefix() };
}

export const testIngestConfig: EventIngestConfig = { maxPending: 100_000, drainBatchSize: 2_000, drainIntervalMs: 20, claimIdleMs: 1_000, writerThread: true };

export interface IngestSetup {
  server: TestServer;
  dialect: DialectName;
  mode: BufferMode;
  /** Bootstrapped workspace's server key and a client key of the same workspace. */
  serverKey: string;
  clientKey: string;
  workspaceId: string;
  drainer: Drainer | null;
  startDrainer(): void;
  stopDrainer(): Promise<void>;
}

export interface IngestSuiteOptions {
  modes?: BufferMode[];
  config?: Partial<Config>;
  events?: Partial<EventIngestConfig>;
  /** Start the drainer before the tests (default true). */
  drain?: boolean;
  server?: Omit<TestServerOptions, 'config'>;
}

export async function createClientKey(server: TestServer, serverKey: string): Promise<string> {
  const created = await server.request('POST', '/v1/api-keys', { key: serverKey, body: { name: 'sdk', kind: 'client' } });
  if (created.status !== 201) throw new Error(`creating a client key failed: ${created.text}`);
  return created.body.key as string;
}

export async function startIngestServer(dialect: DialectName, mode: BufferMode, options: IngestSuiteOptions = {}): Promise<IngestSetup> {
  const server = await startTestServer(dialect, {
    ...options.server,
    config: { buffer: bufferConfig(mode), events: { ...testIngestConfig, ...options.events }, ...options.config },
  });
  const boot = await server.bootstrap();
  const setup: IngestSetup = {
    server,
    dialect,
    mode,
    serverKey: boot.key,
    clientKey: await createClientKey(server, boot.key),
    workspaceId: boot.workspaceId,
    drainer: null,
    startDrainer() {
      setup.drainer ??= startEventDrainer(server.ctx);
    },
    async stopDrainer() {
      await setup.drainer?.stop();
      setup.drainer = null;
    },
  };
  if (options.drain !== false) setup.startDrainer();
  return setup;
}

/** Runs a suite on every database and buffer mode (see describeEach), each with its own server. */
export function describeIngest(name: string, suite: (setup: () => IngestSetup) => void, options: IngestSuiteOptions = {}): void {
  describeEach(name, { buffers: options.modes ?? ['embedded', 'redis'] }, ({ dialect, buffer }) => {
    let setup: IngestSetup | undefined;
    beforeAll(async () => {
      setup = await startIngestServer(dialect, buffer, options);
    });
    afterAll(async () => {
      await setup?.stopDrainer();
      await setup?.server.close();
    });
    suite(() => {
      if (!setup) throw new Error('the ingest server has not started');
      return setup;
    });
  });
}

/** Waits until nothing is pending in the buffer. */
export async function drained(server: TestServer, timeoutMs = 10_000): Promise<void> {
  await waitFor(async () => (await server.ctx.buffer.status()).pending === 0, timeoutMs, 'the buffer to drain');
}

export async function storedEvents(server: TestServer, workspaceId: string) {
  return server.ctx.db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
}

let sequence = 0;
/** A client_event_id no other test uses. */
export function uniqueEventId(label = 'e'): string {
  sequence += 1;
  return `${label}-${process.pid}-${Date.now().toString(36)}-${sequence}`;
}

/** A redis-server of the test's own, with AOF on, that can be stopped and started on the same port and data. */
export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  remove(): Promise<void>;
}

export async function privateRedis(options: { appendonly?: 'yes' | 'no' } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-redis-'));
  let child: ChildProcess | null = null;
  const url = `redis://127.0.0.1:${port}`;
  const instance: PrivateRedis = {
    url,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', options.appendonly ?? 'yes', '--dir', dir], {
        stdio: 'ignore',
      });
      await waitFor(() => accepts(port), 10_000, 'redis-server to listen');
    },
    async stop() {
      const running = child;
      child = null;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    },
    async remove() {
      await instance.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await instance.start();
  return instance;
}

import type { ChildProcess } from 'node:child_process';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContext } from '../../src/app/context.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createWorkspaces } from '../../src/features/workspaces/index.js';
import { createTestDatabase, type DialectName, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { startServe } from '../support/processes.js';
import { freePort, privateRedis, uniquePrefix, waitFor, type BufferMode, type PrivateRedis } from './support.js';

const CONCURRENCY = 24;

interface Acknowledged {
  /** client_event_ids that got a 202. */
  keyed: string[];
  /** unit_ids of events sent without a client_event_id that got a 202 (each unit used once). */
  unkeyed: string[];
}

interface SentEvent {
  event_key: string;
  unit_id: string;
  client_event_id?: string;
}

/** Sends events from many connections until `stop` says so; returns exactly those answered 202. */
async function sendUntilStopped(url: string, key: string, stop: () => boolean, acknowledged: Acknowledged): Promise<Acknowledged> {
  let counter = 0;
  const sender = async (lane: number) => {
    while (!stop()) {
      const n = (counter += 1);
      // A mix: single keyed events, single unkeyed ones, and small keyed batches.
      const shape = n % 4;
      const events: SentEvent[] =
        shape === 3
          ? Array.from({ length: 10 }, (_, i) => ({ event_key: 'kill', unit_id: `u${lane}`, client_event_id: `b-${n}-${i}` }))
          : [shape === 2 ? { event_key: 'kill', unit_id: `nokey-${n}` } : { event_key: 'kill', unit_id: `u${lane}`, client_event_id: `s-${n}` }];
      const batch = events.length > 1;
      try {
        const response = await fetch(`${url}/v1/events${batch ? '/batch' : ''}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(batch ? { events } : events[0]),
        });
        if (response.status !== 202) continue;
        const ack = (await response.json()) as { rejected?: unknown[] };
        if (batch && ack.rejected?.length) throw new Error('a valid event was rejected');
        for (const event of events) {
          if (event.client_event_id !== undefined) acknowledged.keyed.push(event.client_event_id);
          else acknowledged.unkeyed.push(event.unit_id);
        }
      } catch (error) {
        if (error instanceof Error && error.message === 'a valid event was rejected') throw error;
        // The server died with this request in flight: not acknowledged, so not promised.
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, lane) => sender(lane)));
  return acknowledged;
}

async function bootstrap(database: TestDatabase): Promise<string> {
  const config = loadConfig({ VERDICT_DATA_DIR: database.dataDir }, { database: database.config });
  const ctx = await createContext(config, pino({ level: 'silent' }), { migrate: true });
  try {
    return (await createWorkspaces(ctx).createWorkspace('Crash test')).api_key.key;
  } finally {
    await ctx.close();
  }
}

/** Two process start-ups per case make this the slowest test; the cases run side by side. */
const CASE_TIMEOUT_MS = 150_000;

describe('no acknowledged event is lost when verdict serve is killed', () => {
  describeEach('SIGKILL and restart', { buffers: ['embedded', 'redis'], concurrent: true }, ({ dialect, buffer }) => {
    it('stores every event that got a 202 exactly once after SIGKILL and restart', { timeout: CASE_TIMEOUT_MS }, async () => {
      await killAndRestart(dialect, buffer);
    });
  });
});

async function killAndRestart(dialect: DialectName, mode: BufferMode): Promise<void> {
  const database = await createTestDatabase(dialect);
  const handle = openDatabase(database.config);
  let redis: PrivateRedis | null = null;
  const children: ChildProcess[] = [];
  try {
    const key = await bootstrap(database);
    const env = await serveEnvironment(database, mode, (started) => (redis = started));
    const url = `http://127.0.0.1:${env.PORT ?? ''}`;
    const first = await startServe(env);
    children.push(first);
    let killed = false;
    const acknowledged: Acknowledged = { keyed: [], unkeyed: [] };
    const load = sendUntilStopped(url, key, () => killed, acknowledged);
    // Kill at a random moment once acknowledgements are flowing.
    await waitFor(async () => acknowledged.keyed.length + acknowledged.unkeyed.length >= 50, 60_000, 'the first acknowledgements');
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 700));
    const exited = new Promise((resolve) => first.once('exit', resolve));
    first.kill('SIGKILL');
    killed = true;
    await exited;
    await load;

    children.push(await startServe(env));
    await waitFor(
      async () => {
        const status = await fetch(`${url}/v1/events/buffer`, { headers: { authorization: `Bearer ${key}` } });
        return status.ok && ((await status.json()) as { pending: number }).pending === 0;
      },
      60_000,
      'the buffer to drain after the restart',
    );
    await expectStoredOnce(handle, acknowledged);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await handle.destroy();
    await (redis as PrivateRedis | null)?.remove();
    await database.drop();
  }
}

async function serveEnvironment(database: TestDatabase, mode: BufferMode, onRedis: (redis: PrivateRedis) => void): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    VERDICT_DATA_DIR: database.dataDir,
    VERDICT_DATABASE_URL: database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    VERDICT_LOG_LEVEL: 'error',
    VERDICT_BUFFER_CLAIM_IDLE_MS: '500',
  };
  if (mode === 'redis') {
    const redis = await privateRedis();
    onRedis(redis);
    Object.assign(env, { VERDICT_REDIS_URL: redis.url, VERDICT_REDIS_PREFIX: uniquePrefix() });
  }
  return env;
}

async function expectStoredOnce(handle: DatabaseHandle, acknowledged: Acknowledged): Promise<void> {
  const rows = await handle.db.selectFrom('events').select(['client_event_id', 'unit_id']).where('event_key', '=', 'kill').execute();
  const keyedCounts = new Map<string, number>();
  const unkeyedCounts = new Map<string, number>();
  for (const row of rows) {
    if (row.client_event_id !== null) keyedCounts.set(row.client_event_id, (keyedCounts.get(row.client_event_id) ?? 0) + 1);
    else unkeyedCounts.set(row.unit_id, (unkeyedCounts.get(row.unit_id) ?? 0) + 1);
  }
  const lostKeyed = acknowledged.keyed.filter((id) => keyedCounts.get(id) !== 1);
  const lostUnkeyed = acknowledged.unkeyed.filter((unit) => unkeyedCounts.get(unit) !== 1);
  expect(lostKeyed, 'acknowledged keyed events not stored exactly once').toEqual([]);
  expect(lostUnkeyed, 'acknowledged unkeyed events not stored exactly once').toEqual([]);
  // Nothing is stored twice either, acknowledged or not.
  expect([...unkeyedCounts.values()].every((count) => count === 1)).toBe(true);
}

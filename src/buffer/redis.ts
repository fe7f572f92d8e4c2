import os from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { newId } from '../lib/ids.js';
import { asUnavailable, createRedisClient, warnWithoutAof } from './redis-connection.js';
import { ACK_SCRIPT, APPEND_SCRIPT, CONSUMER_GROUP, redisKeys, type RedisKeys } from './redis-scripts.js';
import {
  BufferFullError,
  DEDUPE_WINDOW_MS,
  type AppendOutcome,
  type BufferedEvent,
  type BufferStatus,
  type DrainResult,
  type EventBuffer,
  type PersistEvents,
} from './types.js';

export interface RedisBufferOptions {
  url: string;
  prefix: string;
  db: Db;
  logger: Logger;
  maxPending: number;
  claimIdleMs: number;
}

interface ScriptedRedis extends Redis {
  verdictAppend(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<string>;
  verdictAck(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
}

interface StreamEntry {
  id: string;
  events: BufferedEvent[];
}

type RawEntry = [string, string[] | null];

/** Stream entries (one per request) read per round trip. */
const READ_COUNT = 200;
const DEDUPE_TTL_SECONDS = Math.round(DEDUPE_WINDOW_MS / 1000);
/** A consumer that has been silent this long and holds nothing is a process that is gone. */
const DEAD_CONSUMER_IDLE_MS = 60 * 60 * 1000;

function parseEntries(raw: RawEntry[]): StreamEntry[] {
  return raw.map(([id, fields]) => {
    const at = fields ? fields.indexOf('events') : -1;
    // An entry deleted while still pending comes back without fields; it only needs its ack.
    const events = fields && at >= 0 ? (JSON.parse(fields[at + 1] ?? '[]') as BufferedEvent[]) : [];
    return { id, events };
  });
}

/** Consecutive entries grouped so that each group stays within `maxEvents` (one entry at least). */
function slicesOf(entries: StreamEntry[], maxEvents: number): StreamEntry[][] {
  const slices: StreamEntry[][] = [];
  let current: StreamEntry[] = [];
  let size = 0;
  for (const entry of entries) {
    if (current.length > 0 && size + entry.events.length > maxEvents) {
      slices.push(current);
      current = [];
      size = 0;
    }
    current.push(entry);
    size += entry.events.length;
  }
  if (current.length > 0) slices.push(current);
  return slices;
}

/**
 * The scaled-mode buffer: a Redis Stream with a consumer group. Ingest runs one Lua script per
 * request that checks and sets the de-duplication keys and XADDs the new events atomically.
 * Drainers on any number of processes read with XREADGROUP, insert into the database and XACK
 * only after the commit; entries of a drainer that died are taken over with XAUTOCLAIM.
 */
export class RedisEventBuffer implements EventBuffer {
  readonly kind = 'redis' as const;
  readonly #options: RedisBufferOptions;
  readonly #keys: RedisKeys;
  readonly #consumer = `${os.hostname()}:${process.pid}:${newId()}`;
  #redis: ScriptedRedis | null = null;
  #firstConnect: Promise<void> | null = null;
  #groupReady = false;
  /** Set when entries delivered to this consumer may still be unacknowledged (a failed drain). */
  #ownBacklog = false;
  #lastClaimAt = 0;

  constructor(options: RedisBufferOptions) {
    this.#options = options;
    this.#keys = redisKeys(options.prefix);
  }

  /** Creates the client on first use, so commands that never touch events never connect. */
  async #client(): Promise<ScriptedRedis> {
    if (!this.#redis) {
      const { logger } = this.#options;
      const redis = createRedisClient(this.#options.url, logger) as ScriptedRedis;
      redis.defineCommand('verdictAppend', { lua: APPEND_SCRIPT });
      redis.defineCommand('verdictAck', { lua: ACK_SCRIPT });
      redis.once('ready', () => void warnWithoutAof(redis, logger));
      // After a reconnect Redis may be a fresh instance: check the consumer group again.
      redis.on('ready', () => (this.#groupReady = false));
      this.#redis = redis;
      // The first attempt is waited for (so the first request after start-up does not fail);
      // afterwards the client reconnects by itself and commands fail fast while it is down.
      this.#firstConnect = redis.connect().catch(() => undefined);
    }
    await this.#firstConnect;
    return this.#redis;
  }

  async append(events: BufferedEvent[]): Promise<AppendOutcome[]> {
    if (events.length === 0) return [];
    const keys = [this.#keys.stream, this.#keys.pending];
    const keyIndex = new Map<string, number>();
    const args: (string | number)[] = [this.#options.maxPending, DEDUPE_TTL_SECONDS];
    for (const event of events) {
      let index = 0;
      if (event.client_event_id !== null) {
        const key = this.#keys.dedupe(event.workspace_id, event.client_event_id);
        index = keyIndex.get(key) ?? keys.push(key);
        keyIndex.set(key, index);
      }
      args.push(index, JSON.stringify(event));
    }
    let reply: string;
    try {
      const redis = await this.#client();
      reply = await redis.verdictAppend(keys.length, ...keys, ...args);
    } catch (error) {
      throw asUnavailable(error);
    }
    if (reply.startsWith('F')) throw new BufferFullError(Number(reply.slice(1)), this.#options.maxPending);
    return [...reply].map((flag) => (flag === '1' ? 'accepted' : 'replay'));
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    let entries: StreamEntry[];
    let redelivered: boolean;
    let redis: ScriptedRedis;
    try {
      redis = await this.#client();
      await this.#ensureGroup(redis);
      ({ entries, redelivered } = await this.#nextEntries(redis));
    } catch (error) {
      throw asUnavailable(error);
    }
    let drained = 0;
    for (const slice of slicesOf(entries, maxEvents)) {
      const events = slice.flatMap((entry) => entry.events);
      // On either failure the entries stay pending on this consumer; the next drain reads them
      // again first (a second insert of a committed event stores nothing).
      try {
        if (events.length > 0) await this.#options.db.transaction().execute((trx) => persist(trx, events, { redelivered }));
      } catch (error) {
        this.#ownBacklog = true;
        throw error; // the database's own error, not a Redis one
      }
      try {
        await redis.verdictAck(2, this.#keys.stream, this.#keys.pending, CONSUMER_GROUP, ...slice.flatMap((e) => [e.id, e.events.length]));
      } catch (error) {
        this.#ownBacklog = true;
        throw asUnavailable(error);
      }
      drained += events.length;
    }
    return { drained, more: entries.length >= READ_COUNT };
  }

  async #ensureGroup(redis: Redis): Promise<void> {
    if (this.#groupReady) return;
    try {
      // From id 0: entries added before the group existed are drained too.
      await redis.xgroup('CREATE', this.#keys.stream, CONSUMER_GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('BUSYGROUP')) throw error;
    }
    this.#groupReady = true;
  }

  /** Own unacknowledged entries first, then entries of dead consumers now and then, then new ones. */
  async #nextEntries(redis: Redis): Promise<{ entries: StreamEntry[]; redelivered: boolean }> {
    if (this.#ownBacklog) {
      const own = await this.#read(redis, '0');
      if (own.length > 0) return { entries: own, redelivered: true };
      this.#ownBacklog = false;
    }
    const claimEveryMs = Math.max(Math.floor(this.#options.claimIdleMs / 4), 100);
    if (Date.now() - this.#lastClaimAt >= claimEveryMs) {
      this.#lastClaimAt = Date.now();
      const claimed = await this.#claimStale(redis);
      if (claimed.length > 0) return { entries: claimed, redelivered: true };
    }
    return { entries: await this.#read(redis, '>'), redelivered: false };
  }

  async #read(redis: Redis, from: '0' | '>'): Promise<StreamEntry[]> {
    try {
      const reply = (await redis.xreadgroup('GROUP', CONSUMER_GROUP, this.#consumer, 'COUNT', READ_COUNT, 'STREAMS', this.#keys.stream, from)) as
        [string, RawEntry[]][] | null;
      return parseEntries(reply?.[0]?.[1] ?? []);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('NOGROUP')) this.#groupReady = false;
      throw error;
    }
  }

  async #claimStale(redis: Redis): Promise<StreamEntry[]> {
    const reply = (await redis.xautoclaim(this.#keys.stream, CONSUMER_GROUP, this.#consumer, this.#options.claimIdleMs, '0-0', 'COUNT', READ_COUNT)) as [
      string,
      RawEntry[],
      string[]?,
    ];
    const claimed = parseEntries(reply[1]);
    // A full page means more may be waiting: look again on the next round.
    if (claimed.length >= READ_COUNT) this.#lastClaimAt = 0;
    if (claimed.length > 0) this.#options.logger.warn({ entries: claimed.length }, 'took over event-buffer entries of a drainer that stopped');
    else await this.#pruneDeadConsumers(redis);
    return claimed;
  }

  /** Every process start adds a consumer to the group; forget the ones that are gone and hold nothing. */
  async #pruneDeadConsumers(redis: Redis): Promise<void> {
    const consumers = (await redis.xinfo('CONSUMERS', this.#keys.stream, CONSUMER_GROUP)) as (string | number)[][];
    for (const fields of consumers) {
      const info = new Map<string, string | number>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1] as string | number);
      const name = String(info.get('name'));
      if (name !== this.#consumer && Number(info.get('pending')) === 0 && Number(info.get('idle')) > DEAD_CONSUMER_IDLE_MS) {
        await redis.xgroup('DELCONSUMER', this.#keys.stream, CONSUMER_GROUP, name);
      }
    }
  }

  async status(): Promise<BufferStatus> {
    try {
      const redis = await this.#client();
      // Never below zero, even if someone deleted the counter while entries were in flight.
      const pending = Math.max(0, Number((await redis.get(this.#keys.pending)) ?? 0));
      return { kind: this.kind, pending, max_pending: this.#options.maxPending };
    } catch (error) {
      throw asUnavailable(error);
    }
  }

  async purgeExpiredKeys(): Promise<number> {
    return 0; // de-duplication keys carry their own 30-day TTL
  }

  async open(): Promise<void> {
    await this.#client();
  }

  async close(): Promise<void> {
    const redis = this.#redis;
    this.#redis = null;
    if (!redis) return;
    await redis.quit().catch(() => redis.disconnect());
  }
}

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Change, ChangeFeed } from './change-feed.js';

interface Envelope {
  origin: string;
  change: Change;
}

/**
 * Relays committed changes between processes over Redis pub/sub, so a revocation, an
 * experiment edit or a re-bucket made on one API process reaches the caches of every other
 * at once. Pub/sub is best-effort: a message lost while Redis is down is covered by the caches'
 * short TTL, which is why they keep one.
 */
export class RedisChangeRelay {
  readonly #origin = randomUUID();
  readonly #publisher: Redis;
  readonly #subscriber: Redis;

  /** `prefix` namespaces the channel like the buffer's keys, so deployments sharing a Redis stay apart. */
  constructor(url: string, prefix: string, feed: ChangeFeed, logger: Logger) {
    const channel = `${prefix}changes`;
    const options = { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: (n: number) => Math.min(n * 200, 2_000) };
    this.#publisher = new Redis(url, options);
    this.#subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
    const quiet = () => undefined;
    this.#publisher.on('error', quiet);
    this.#subscriber.on('error', quiet);
    this.#subscriber
      .subscribe(channel)
      .catch((error: unknown) => logger.warn({ err: error }, 'subscribing to cache changes failed; caches fall back to their TTL'));
    this.#subscriber.on('message', (_channel: string, message: string) => {
      try {
        const envelope = JSON.parse(message) as Envelope;
        if (envelope.origin !== this.#origin) feed.deliver(envelope.change);
      } catch (error) {
        logger.warn({ err: error }, 'ignoring a malformed cache change message');
      }
    });
    feed.connectRelay((change) => {
      this.#publisher.publish(channel, JSON.stringify({ origin: this.#origin, change } satisfies Envelope)).catch(quiet);
    });
  }

  async close(): Promise<void> {
    this.#publisher.disconnect();
    this.#subscriber.disconnect();
  }
}

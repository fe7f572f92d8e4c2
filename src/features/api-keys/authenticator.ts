import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import { constantTimeEqual } from '../../lib/secrets.js';
import type { Clock } from '../../lib/time.js';
import { problems } from '../../http/problems.js';
import type { CacheStats } from '../../observability/metrics.js';
import type { KeyAuthenticator, Principal } from '../../http/principal.js';
import { hashKey, parseKey } from './key-format.js';

export type { Principal } from '../../http/principal.js';

interface CachedKey {
  principal: Principal | null;
  hash: string;
}

export interface AuthenticatorOptions {
  db: Db;
  clock: Clock;
  cacheTtlMs: number;
  usageFlushMs: number;
  onFlushError: (error: unknown) => void;
  /** True when a lookup failed because the database cannot serve now (dialect seam). */
  isUnavailable?: (error: unknown) => boolean;
  cacheStats: CacheStats;
}

/** After a lookup found the database unavailable, keys verified before are served without asking it for this long. */
const OUTAGE_SKIP_MS = 1_000;
/** Cache reads on the normal path: an expired entry means "ask the database". */
const FRESH = { allowStale: false } as const;
/** What a client whose key cannot be verified should wait before retrying. */
const RETRY_AFTER_SECONDS = 2;

/**
 * Verifies bearer keys. Lookups are cached for a few seconds (bounded, so revocation reaches
 * every process within the TTL) and last-used times are collected in memory and written in one
 * batch, so an authenticated request costs no database write.
 *
 * An expired lookup stays in the cache (until revoked, evicted or looked up again) as the
 * fallback for a database outage: a key this process verified keeps working while the
 * database cannot be asked, so ingest can go on buffering events in Redis; a key never seen
 * answers 503. A revocation made on this process, or heard from another, clears the fallback.
 */
export class Authenticator implements KeyAuthenticator {
  readonly #options: AuthenticatorOptions;
  readonly #cache: LRUCache<string, CachedKey>;
  readonly #usage = new Map<string, number>();
  /** Per connection (socket): the last Authorization header it sent, and its key hash. */
  readonly #lastHeaderOf = new WeakMap<object, { authorization: string; hash: string }>();
  /** Lookups in progress, so concurrent requests with one expired key ask the database once. */
  readonly #lookups = new Map<string, Promise<CachedKey>>();
  /** Until when known keys skip the database, which just failed to answer. */
  #outageUntil = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
    // Expired entries are not deleted when read, so they remain as the outage fallback; reads
    // ask for fresh entries (FRESH), while iteration (a revocation's sweep) sees expired ones too.
    this.#cache = new LRUCache({ max: 10_000, ttl: Math.max(options.cacheTtlMs, 1), allowStale: true, noDeleteOnStaleGet: true });
    this.#timer = setInterval(() => void this.flushUsage(), options.usageFlushMs);
    this.#timer.unref();
  }

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const hash = hashOfBearer(authorization);
    const cached = this.#cachedLookup(hash);
    if (cached) this.#options.cacheStats.hit();
    else this.#options.cacheStats.miss();
    return this.#verified(hash, cached ?? (await this.#lookupWithFallback(hash)));
  }

  /**
   * The same answer as `authenticate` when the key's lookup is cached, without a promise (the
   * hot path of every SDK call); undefined when the database must be asked. `connection` (the
   * request's socket) lets a keep-alive connection that sends the same header again skip
   * parsing and hashing it.
   */
  authenticateCached(authorization: string | undefined, connection?: object): Principal | undefined {
    const hash = connection === undefined || authorization === undefined ? hashOfBearer(authorization) : this.#hashOnConnection(connection, authorization);
    const cached = this.#cachedLookup(hash);
    // A miss is counted by the `authenticate` call that follows it.
    if (!cached) return undefined;
    this.#options.cacheStats.hit();
    return this.#verified(hash, cached);
  }

  /**
   * The key hash of the header this connection sent, remembered for its next request (SDKs send
   * the same key on every request of a keep-alive connection; parsing and hashing it cost 1.5-2
   * µs). Comparing the header with the one the same client sent before tells that client
   * nothing about anyone else's key, and the hash still goes through the cache, so a
   * revocation is seen as before. The header is kept only as long as the connection.
   */
  #hashOnConnection(connection: object, authorization: string): string {
    const last = this.#lastHeaderOf.get(connection);
    if (last?.authorization === authorization) return last.hash;
    const hash = hashOfBearer(authorization);
    this.#lastHeaderOf.set(connection, { authorization, hash });
    return hash;
  }

  #cachedLookup(hash: string): CachedKey | undefined {
    return this.#options.cacheTtlMs > 0 ? this.#cache.get(hash, FRESH) : undefined;
  }

  async #lookupWithFallback(hash: string): Promise<CachedKey> {
    const stale = this.#cache.get(hash);
    if (stale && performance.now() < this.#outageUntil) return stale;
    try {
      return await (this.#lookups.get(hash) ?? this.#startLookup(hash));
    } catch (error) {
      if (!this.#options.isUnavailable?.(error)) throw error;
      this.#outageUntil = performance.now() + OUTAGE_SKIP_MS;
      if (stale) return stale;
      throw problems.unavailable('the API key cannot be verified now: the database is unreachable; retry shortly', RETRY_AFTER_SECONDS);
    }
  }

  #startLookup(hash: string): Promise<CachedKey> {
    const lookup = this.#lookup(hash).then((principal): CachedKey => ({ principal, hash }));
    this.#lookups.set(hash, lookup);
    const settle = (looked?: CachedKey) => {
      if (this.#lookups.get(hash) !== lookup) return; // a revocation came in meanwhile
      this.#lookups.delete(hash);
      if (looked) this.#cache.set(hash, looked);
    };
    // Registered before the caller awaits, so the cache holds the answer when the caller resumes.
    lookup.then(settle, () => settle());
    return lookup;
  }

  #verified(hash: string, cached: CachedKey): Principal {
    // The map lookup already matched the hash; comparing again in constant time keeps the
    // final decision free of early-exit timing should the lookup strategy ever change.
    if (!cached.principal || !constantTimeEqual(cached.hash, hash)) {
      throw problems.unauthorized('the API key is unknown or has been revoked');
    }
    this.#usage.set(cached.principal.keyId, this.#options.clock.now());
    return cached.principal;
  }

  /** A use recorded on this process but not yet written; lists merge it so they read fresh. */
  pendingUsage(keyId: string): number | undefined {
    return this.#usage.get(keyId);
  }

  /**
   * Forgets what is cached about one key, so its revocation is enforced at once on this process
   * (the other keys keep their entries, and with them their outage fallback).
   */
  invalidateKey(keyId: string): void {
    const hashes = [...this.#cache.entries()].filter(([, cached]) => cached.principal?.keyId === keyId).map(([hash]) => hash);
    for (const hash of hashes) this.#cache.delete(hash);
    // A lookup that started before the revocation must not put its answer back.
    this.#lookups.clear();
  }

  async #lookup(hash: string): Promise<Principal | null> {
    const row = await this.#options.db
      .selectFrom('api_keys')
      .select(['id', 'workspace_id', 'environment_id', 'kind', 'revoked_at'])
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    if (!row || row.revoked_at !== null) return null;
    return { keyId: row.id, workspaceId: row.workspace_id, environmentId: row.environment_id, kind: row.kind, via: 'bearer' };
  }

  async flushUsage(): Promise<void> {
    if (this.#usage.size === 0) return;
    const pending = [...this.#usage.entries()];
    this.#usage.clear();
    try {
      for (const [keyId, usedAt] of pending) {
        await this.#options.db.updateTable('api_keys').set({ last_used_at: usedAt }).where('id', '=', keyId).execute();
      }
    } catch (error) {
      for (const [keyId, usedAt] of pending) if (!this.#usage.has(keyId)) this.#usage.set(keyId, usedAt);
      this.#options.onFlushError(error);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flushUsage();
  }
}

function hashOfBearer(authorization: string | undefined): string {
  const key = bearerToken(authorization);
  if (!parseKey(key)) throw problems.unauthorized('the API key is malformed; expected vd_{srv|clt}_{env}_{secret}');
  return hashKey(key);
}

function bearerToken(authorization: string | undefined): string {
  if (!authorization) throw problems.unauthorized('an API key is required: send "Authorization: Bearer <key>"');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw problems.unauthorized('the Authorization header must use the Bearer scheme');
  return match[1] as string;
}

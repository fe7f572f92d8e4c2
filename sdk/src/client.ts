import { Assignments, type AssignManyResult, type AssignOptions } from './assignments.js';
import { VerdictError, httpError } from './errors.js';
import { EventDelivery, MAX_EVENTS_PER_REQUEST } from './events.js';
import { createTransport, type FetchLike } from './http.js';
import { eventIdGenerator } from './ids.js';
import type { Assignment, ClientStats, TrackedEvent } from './types.js';

export interface ClientOptions {
  /** Where Verdict answers, e.g. `https://verdict.example.com`. */
  baseUrl: string;
  /** A server key, or in a browser a client key (it may only assign, track and log exposures). */
  apiKey: string;
  /** How often queued events are sent (default 1000 ms). */
  flushIntervalMs?: number;
  /** Events per request, and the queue length that sends at once (default 100, at most 500). */
  maxBatch?: number;
  /** Events kept while the server cannot be reached; beyond it the oldest are dropped (default 10,000). */
  maxQueue?: number;
  /** Requests sent at the same time while flushing (default 2). */
  maxConcurrentRequests?: number;
  /** Backoff of retries: the first waits about `baseDelayMs` (default 250), none more than `maxDelayMs` (default 30,000). */
  retry?: { baseDelayMs?: number; maxDelayMs?: number };
  /** Stored assignments kept in memory (default 10,000; least recently used go first). */
  maxCachedAssignments?: number;
  /** How long a cached assignment is reused before it is asked again (default 60,000 ms): a launch reaches long-lived clients within it. */
  assignmentCacheTtlMs?: number;
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike;
  /** Failures that happen in the background (events rejected, dropped or abandoned). Default: console.warn. */
  onError?: (error: VerdictError) => void;
}

export interface CloseOptions {
  /** How long close() tries to deliver what is queued before giving up (default 10,000 ms). */
  timeoutMs?: number;
}

export interface VerdictClient {
  /** The unit's variant of a running experiment; cached, so repeat calls cost nothing. */
  assign(experimentKey: string, unitId: string, context?: Record<string, unknown>, options?: Omit<AssignOptions, 'context'>): Promise<Assignment>;
  /** Several experiments for one unit in one request (`/v1/assign/batch`). */
  assignMany(experimentKeys: string[], unitId: string, context?: Record<string, unknown>, options?: Omit<AssignOptions, 'context'>): Promise<AssignManyResult>;
  /** Logs the exposure of an assignment made with `{ logExposure: false }`; repeats are harmless. */
  logExposure(experimentKey: string, unitId: string, variant: string): Promise<void>;
  /** Queues an event and returns its `client_event_id`; it is sent in the background. */
  track(eventKey: string, unitId: string, properties?: Record<string, unknown>, occurredAt?: Date | string): string;
  /** Sends everything queued now; resolves when it is acknowledged (or rejected). */
  flush(): Promise<void>;
  /** Flushes, stops the timer and the page listeners; later `track()` calls are dropped. */
  close(options?: CloseOptions): Promise<void>;
  stats(): ClientStats;
}

function positive(name: string, value: number | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) throw new RangeError(`${name} must be an integer from 1 to ${max}, got ${value}`);
  return value;
}

function defaultOnError(error: VerdictError): void {
  console.warn(`[verdict] ${error.message}`);
}

interface PageEvents {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
  document?: { visibilityState?: string };
}

/** In a browser, sends what is queued with `keepalive` when the page is hidden or unloaded. */
function watchPage(onLeave: () => void): () => void {
  const page = globalThis as unknown as Partial<PageEvents>;
  if (typeof page.addEventListener !== 'function' || typeof page.removeEventListener !== 'function' || !page.document) return () => undefined;
  const onVisibility = () => {
    if (page.document?.visibilityState === 'hidden') onLeave();
  };
  page.addEventListener('pagehide', onLeave);
  page.addEventListener('visibilitychange', onVisibility);
  return () => {
    page.removeEventListener?.('pagehide', onLeave);
    page.removeEventListener?.('visibilitychange', onVisibility);
  };
}

export function createClient(options: ClientOptions): VerdictClient {
  if (!options.baseUrl) throw new TypeError('createClient needs baseUrl');
  if (!options.apiKey) throw new TypeError('createClient needs apiKey');
  const fetchImpl = options.fetch ?? (globalThis.fetch?.bind(globalThis) as FetchLike | undefined);
  if (!fetchImpl) throw new TypeError('no fetch available: pass one as the fetch option');
  const onError = options.onError ?? defaultOnError;
  const report = (error: VerdictError) => {
    try {
      onError(error);
    } catch {
      // A failing error handler must not break delivery.
    }
  };
  const transport = createTransport(options.baseUrl, options.apiKey, fetchImpl);
  const assignments = new Assignments(
    transport,
    positive('maxCachedAssignments', options.maxCachedAssignments, 10_000),
    positive('assignmentCacheTtlMs', options.assignmentCacheTtlMs, 60_000),
  );
  const delivery = new EventDelivery({
    transport,
    maxBatch: positive('maxBatch', options.maxBatch, 100, MAX_EVENTS_PER_REQUEST),
    maxQueue: positive('maxQueue', options.maxQueue, 10_000),
    flushIntervalMs: positive('flushIntervalMs', options.flushIntervalMs, 1_000),
    concurrency: positive('maxConcurrentRequests', options.maxConcurrentRequests, 2, 16),
    backoff: { baseDelayMs: options.retry?.baseDelayMs ?? 250, maxDelayMs: options.retry?.maxDelayMs ?? 30_000 },
    report,
  });
  const unwatchPage = watchPage(() => delivery.sendWithKeepalive());
  const nextEventId = eventIdGenerator();
  let closed = false;

  return {
    assign: (experimentKey, unitId, context, assignOptions = {}) =>
      assignments.assign(experimentKey, unitId, { ...assignOptions, ...(context ? { context } : {}) }),
    assignMany: (experimentKeys, unitId, context, assignOptions = {}) =>
      assignments.assignMany(experimentKeys, unitId, { ...assignOptions, ...(context ? { context } : {}) }),
    async logExposure(experimentKey, unitId, variant) {
      const result = await transport('POST', '/v1/exposures', { experiment_key: experimentKey, unit_id: unitId, variant });
      if (result.status !== 202) throw httpError(`logging the exposure of ${experimentKey}`, result.status, result.body);
      assignments.forget(experimentKey, unitId);
    },
    track(eventKey, unitId, properties, occurredAt) {
      const event: TrackedEvent = { event_key: eventKey, unit_id: unitId, client_event_id: nextEventId() };
      if (properties !== undefined) event.properties = properties;
      // An invalid Date goes as it is: the server refuses it and onError says why; track() never throws.
      if (occurredAt !== undefined)
        event.occurred_at = typeof occurredAt === 'string' || Number.isNaN(occurredAt.getTime()) ? String(occurredAt) : occurredAt.toISOString();
      if (closed) delivery.dropAfterClose();
      else delivery.add(event);
      return event.client_event_id;
    },
    flush: () => delivery.flush(),
    async close(closeOptions = {}) {
      if (closed) return;
      closed = true;
      unwatchPage();
      await delivery.close(closeOptions.timeoutMs ?? 10_000);
    },
    stats: () => delivery.stats(),
  };
}

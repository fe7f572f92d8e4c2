import { VerdictError, httpError, type RejectedEvent } from './errors.js';
import type { TrackEventBatchResponse } from './generated/api.js';
import { backoffMs, EncodedJson, isRetryable, retryAfterMs, sleep, type BackoffOptions, type Transport } from './http.js';
import { BoundedQueue } from './queue.js';
import type { ClientStats, TrackedEvent } from './types.js';

const BATCH_PATH = '/v1/events/batch';
/** The API's limit per request. */
export const MAX_EVENTS_PER_REQUEST = 500;
/** Browsers allow 64 KiB of keepalive bodies in flight per page; stay under it. */
const KEEPALIVE_BUDGET_BYTES = 60_000;

export interface DeliveryOptions {
  transport: Transport;
  /** Events per request, and the queue length that starts a flush at once. */
  maxBatch: number;
  maxQueue: number;
  flushIntervalMs: number;
  /** Requests sent at the same time while flushing. */
  concurrency: number;
  backoff: BackoffOptions;
  report: (error: VerdictError) => void;
}

type Counters = Omit<ClientStats, 'queued' | 'inFlight'>;

/**
 * The event queue and its delivery: batches of `maxBatch` go to `/v1/events/batch` on a timer,
 * when a batch is full, and on `flush()`. A batch that gets no answer, a 5xx or a 429 is sent
 * again, unchanged, after a backoff; its events' `client_event_id`s make the repeat harmless.
 */
export class EventDelivery {
  readonly #options: DeliveryOptions;
  readonly #queue: BoundedQueue<TrackedEvent>;
  readonly #inFlight = new Set<TrackedEvent[]>();
  readonly #counts: Counters = { tracked: 0, sent: 0, rejected: 0, dropped: 0, abandoned: 0, retries: 0 };
  readonly #abort = new AbortController();
  readonly #abandoned: TrackedEvent[] = [];
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #lanes = new Set<Promise<void>>();
  #overflowReported = false;

  constructor(options: DeliveryOptions) {
    this.#options = options;
    this.#queue = new BoundedQueue(options.maxQueue);
    this.#timer = setInterval(() => {
      if (this.#queue.length > 0) void this.flush();
    }, options.flushIntervalMs);
    // In Node, a pending flush timer must not keep the process alive on its own.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  add(event: TrackedEvent): void {
    this.#counts.tracked += 1;
    const dropped = this.#queue.push(event);
    if (dropped > 0) this.#noteDropped(dropped);
    if (this.#queue.length >= this.#options.maxBatch) this.#fillLanes();
  }

  /** Counts events that could not be queued (the queue was full, or the client closed). */
  #noteDropped(count: number, why = 'the event queue is full: the oldest events are being dropped'): void {
    this.#counts.dropped += count;
    // Once per outage, not once per event: the count is in stats().dropped.
    if (this.#overflowReported) return;
    this.#overflowReported = true;
    this.#options.report(new VerdictError('dropped', why, { count }));
  }

  dropAfterClose(): void {
    this.#counts.tracked += 1;
    this.#noteDropped(1, 'track() after close(): the event is dropped');
  }

  stats(): ClientStats {
    let inFlight = 0;
    for (const batch of this.#inFlight) inFlight += batch.length;
    return { ...this.#counts, queued: this.#queue.length, inFlight };
  }

  /** Resolves once every event queued before the call is acknowledged, rejected or dropped. */
  async flush(): Promise<void> {
    this.#fillLanes();
    while (this.#lanes.size > 0) {
      await Promise.all([...this.#lanes]);
      this.#fillLanes();
    }
  }

  /**
   * Starts senders up to the concurrency limit, one per batch waiting. Each keeps sending while
   * anything is queued, so a steady stream of events keeps `concurrency` requests in flight.
   */
  #fillLanes(): void {
    let waiting = this.#queue.length;
    while (this.#lanes.size < this.#options.concurrency && waiting > 0 && !this.#abort.signal.aborted) {
      const lane: Promise<void> = this.#lane().finally(() => this.#lanes.delete(lane));
      this.#lanes.add(lane);
      waiting -= this.#options.maxBatch;
    }
  }

  async #lane(): Promise<void> {
    while (this.#queue.length > 0 && !this.#abort.signal.aborted) {
      const batch = this.#queue.take(this.#options.maxBatch);
      this.#inFlight.add(batch);
      try {
        await this.#deliver(batch);
      } finally {
        this.#inFlight.delete(batch);
      }
    }
  }

  async #deliver(batch: TrackedEvent[]): Promise<void> {
    const encoded = this.#encode(batch);
    if (!encoded) return;
    for (let attempt = 0; ; attempt += 1) {
      const retryInMs = await this.#attempt(encoded, attempt);
      if (retryInMs === null) return;
      this.#counts.retries += 1;
      if (!(await sleep(retryInMs, this.#abort.signal))) {
        this.#abandoned.push(...encoded.events);
        return;
      }
    }
  }

  /**
   * The batch as JSON, once for all its attempts. Events JSON cannot encode (a cycle or a BigInt
   * in the properties) are reported as rejected and left out, so they cannot block the others.
   */
  #encode(batch: TrackedEvent[]): Encoded | null {
    try {
      return { events: batch, body: new EncodedJson(JSON.stringify({ events: batch })) };
    } catch {
      const rejected: RejectedEvent[] = [];
      const events = batch.filter((event) => {
        try {
          JSON.stringify(event);
          return true;
        } catch (error) {
          rejected.push({ event, reason: `the event cannot be encoded as JSON: ${error instanceof Error ? error.message : String(error)}` });
          return false;
        }
      });
      this.#reportRejected(rejected, batch.length);
      return events.length > 0 ? { events, body: new EncodedJson(JSON.stringify({ events })) } : null;
    }
  }

  /** Sends the batch once; returns null when it is settled, or how long to wait before retrying. */
  async #attempt({ events: batch, body }: Encoded, attempt: number): Promise<number | null> {
    const signal = this.#abort.signal;
    let result;
    try {
      result = await this.#options.transport('POST', BATCH_PATH, body, { signal });
    } catch {
      if (!signal.aborted) return backoffMs(attempt, this.#options.backoff);
      this.#abandoned.push(...batch);
      return null;
    }
    if (result.status === 202) {
      this.#acknowledged(batch, result.body);
      return null;
    }
    if (isRetryable(result.status)) {
      const asked = retryAfterMs(result.headers);
      // Honour Retry-After, with a little jitter so queued clients do not return in step.
      return asked === null ? backoffMs(attempt, this.#options.backoff) : asked * (1 + Math.random() * 0.2);
    }
    this.#counts.rejected += batch.length;
    this.#options.report(httpError('sending events', result.status, result.body, batch));
    return null;
  }

  #acknowledged(batch: TrackedEvent[], body: unknown): void {
    const rejected = (body as Partial<TrackEventBatchResponse> | null)?.rejected ?? [];
    this.#counts.sent += batch.length - rejected.length;
    this.#overflowReported = false;
    const details = rejected.flatMap(({ index, reason }) => {
      const event = batch[index];
      return event ? [{ event, reason }] : [];
    });
    this.#reportRejected(details, batch.length);
  }

  #reportRejected(rejected: RejectedEvent[], outOf: number): void {
    if (rejected.length === 0) return;
    this.#counts.rejected += rejected.length;
    const first = rejected[0]?.reason ?? 'no reason given';
    this.#options.report(
      new VerdictError('rejected', `${rejected.length} of ${outOf} events were rejected (first: ${first})`, {
        rejected,
        events: rejected.map(({ event }) => event),
      }),
    );
  }

  /**
   * The page is going away: send what is queued, and again what is in flight (an unload cancels
   * ordinary requests; the server ignores a repeated client_event_id), with `keepalive` so the
   * requests outlive the page. Only the first 60 KB fit; the rest stays queued in case the page
   * comes back from the back-forward cache.
   */
  sendWithKeepalive(): void {
    const queued = this.#queue.take(this.#queue.length);
    const resend = [...this.#inFlight].flat();
    const { chunks, leftover } = chunkByBytes([queued, resend], KEEPALIVE_BUDGET_BYTES, this.#options.maxBatch);
    const wasQueued = new Set(queued);
    this.#queue.unshift(leftover.filter((event) => wasQueued.has(event)));
    for (const { events, fromQueue } of chunks) {
      const sent = this.#options.transport('POST', BATCH_PATH, { events }, { keepalive: true });
      if (!fromQueue) {
        sent.catch(() => undefined);
        continue;
      }
      sent.then(
        (result) => (result.status === 202 ? this.#acknowledged(events, result.body) : this.#queue.unshift(events)),
        () => this.#queue.unshift(events),
      );
    }
  }

  /** Stops the timer, flushes for at most `timeoutMs`, then gives up on what is left. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.#timer);
    const timeout = new AbortController();
    const flushed = this.flush().then(() => timeout.abort());
    const timedOut = await sleep(timeoutMs, timeout.signal);
    if (timedOut) {
      this.#abort.abort();
      await flushed;
      this.#abandoned.push(...this.#queue.take(this.#queue.length));
    }
    if (this.#abandoned.length === 0) return;
    const events = this.#abandoned.splice(0);
    this.#counts.abandoned += events.length;
    this.#options.report(new VerdictError('abandoned', `close() timed out after ${timeoutMs} ms: ${events.length} events were not sent`, { events }));
  }
}

interface Encoded {
  events: TrackedEvent[];
  body: EncodedJson;
}

interface Chunk {
  events: TrackedEvent[];
  fromQueue: boolean;
}

const encoder = new TextEncoder();

/** Bytes of the event's JSON and a comma; too many to fit anywhere when it cannot be encoded. */
function encodedSize(event: TrackedEvent): number {
  try {
    return encoder.encode(JSON.stringify(event)).length + 1;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Splits groups of events into requests whose bodies together stay within `budget` bytes. */
function chunkByBytes(groups: [TrackedEvent[], TrackedEvent[]], budget: number, maxPerChunk: number): { chunks: Chunk[]; leftover: TrackedEvent[] } {
  const envelope = encoder.encode('{"events":[]}').length;
  const chunks: Chunk[] = [];
  const leftover: TrackedEvent[] = [];
  let remaining = budget;
  groups.forEach((group, groupIndex) => {
    let current: Chunk | null = null;
    for (const event of group) {
      const size = encodedSize(event);
      const opening = current && current.events.length < maxPerChunk ? 0 : envelope;
      if (size + opening > remaining) {
        leftover.push(event);
        continue;
      }
      if (opening > 0) {
        current = { events: [], fromQueue: groupIndex === 0 };
        chunks.push(current);
      }
      current?.events.push(event);
      remaining -= size + opening;
    }
  });
  return { chunks, leftover };
}

import type { Db, Tx } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { Clock } from '../lib/time.js';
import { appendChunks, claimChunks, claimDedupeKeys, countPending, dedupeKeyOf, deleteChunks, deleteExpiredKeys, type DedupeKey } from './embedded-store.js';
import { GroupCommit } from '../db/group-commit.js';
import { PendingGauge } from './pending-gauge.js';
import {
  BufferFullError,
  BufferUnavailableError,
  DEDUPE_WINDOW_MS,
  type AppendOutcome,
  type BufferedEvent,
  type BufferStatus,
  type DrainResult,
  type EventBuffer,
  type PersistEvents,
} from './types.js';

export interface EmbeddedBufferOptions {
  db: Db;
  seam: DialectSeam;
  clock: Clock;
  maxPending: number;
}

/** A group stops growing at this many events, which bounds one transaction's duration. */
const MAX_EVENTS_PER_GROUP = 2_000;
const PURGE_BATCH = 5_000;

/** The distinct keys of a group, each once, in first-seen order. */
function keysOf(groups: BufferedEvent[][]): DedupeKey[] {
  const keys = new Map<string, DedupeKey>();
  for (const events of groups) {
    for (const event of events) {
      if (event.client_event_id === null) continue;
      const key = dedupeKeyOf(event.workspace_id, event.client_event_id);
      if (!keys.has(key)) keys.set(key, { workspace_id: event.workspace_id, client_event_id: event.client_event_id });
    }
  }
  return [...keys.values()];
}

/**
 * Decides each event of a committed group: an event without a client_event_id is always new;
 * of the events sharing a key, only the first is new and only if this group won the key.
 */
function decide(groups: BufferedEvent[][], claimed: Set<string>): { outcomes: AppendOutcome[][]; accepted: BufferedEvent[] } {
  const used = new Set<string>();
  const accepted: BufferedEvent[] = [];
  const outcomes = groups.map((events) =>
    events.map((event): AppendOutcome => {
      if (event.client_event_id !== null) {
        const key = dedupeKeyOf(event.workspace_id, event.client_event_id);
        if (!claimed.has(key) || used.has(key)) return 'replay';
        used.add(key);
      }
      accepted.push(event);
      return 'accepted';
    }),
  );
  return { outcomes, accepted };
}

/**
 * The default buffer: a durable table in the main database. Concurrent requests are appended
 * by group commit (one transaction, one fsync for many requests) together with their
 * de-duplication keys, so a 202 always follows a commit that holds both.
 */
export class EmbeddedEventBuffer implements EventBuffer {
  readonly kind = 'embedded' as const;
  readonly #options: EmbeddedBufferOptions;
  readonly #group: GroupCommit<BufferedEvent[], AppendOutcome[]>;
  readonly #gauge: PendingGauge;

  constructor(options: EmbeddedBufferOptions) {
    this.#options = options;
    this.#group = new GroupCommit({
      commit: (groups) => this.#commit(groups),
      weigh: (events) => events.length,
      maxWeight: MAX_EVENTS_PER_GROUP,
    });
    this.#gauge = new PendingGauge(() => countPending(options.db));
  }

  async append(events: BufferedEvent[]): Promise<AppendOutcome[]> {
    if (events.length === 0) return [];
    const pending = await this.#gauge.read().catch((error: unknown) => {
      throw this.#translate(error);
    });
    if (pending > this.#options.maxPending) throw new BufferFullError(pending, this.#options.maxPending);
    try {
      return await this.#group.submit(events);
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async #commit(groups: BufferedEvent[][]): Promise<AppendOutcome[][]> {
    const { db, clock } = this.#options;
    const now = clock.now();
    const result = await db.transaction().execute(async (trx: Tx) => {
      const keys = keysOf(groups);
      const claimed = keys.length > 0 ? await claimDedupeKeys(trx, keys, now + DEDUPE_WINDOW_MS) : new Set<string>();
      const decided = decide(groups, claimed);
      await appendChunks(trx, decided.accepted, now);
      return decided;
    });
    this.#gauge.add(result.accepted.length);
    return result.outcomes;
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    const { db, seam } = this.#options;
    try {
      // A plain read first: an idle drainer should not take SQLite's write lock every poll.
      const any = await db.selectFrom('event_buffer').select('id').limit(1).executeTakeFirst();
      if (!any) return { drained: 0, more: false };
      const result = await db.transaction().execute(async (trx) => {
        const { ids, events, more } = await claimChunks(trx, seam, maxEvents);
        if (ids.length > 0) {
          await persist(trx, events);
          await deleteChunks(trx, ids);
        }
        return { drained: events.length, more };
      });
      this.#gauge.add(-result.drained);
      return result;
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async status(): Promise<BufferStatus> {
    try {
      const pending = await countPending(this.#options.db);
      this.#gauge.set(pending);
      return { kind: this.kind, pending, max_pending: this.#options.maxPending };
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async purgeExpiredKeys(now: number): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await deleteExpiredKeys(this.#options.db, now, PURGE_BATCH);
      total += removed;
      if (removed < PURGE_BATCH) return total;
    }
  }

  async open(): Promise<void> {
    // Nothing to connect: the buffer lives in the main database.
  }

  async close(): Promise<void> {
    await this.#group.idle();
  }

  #translate(error: unknown): unknown {
    // Unreachable, or (SQLite) another process held the write lock past the busy wait: either
    // way the events were not stored and a retry shortly may succeed.
    if (this.#options.seam.isUnavailable(error)) {
      return new BufferUnavailableError('the database that holds the event buffer cannot be reached or is busy', { cause: error });
    }
    return error;
  }
}

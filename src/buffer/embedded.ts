import type { Db } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { Clock } from '../lib/time.js';
import { InlineBufferWriter, MAX_EVENTS_PER_GROUP, type BufferWriter } from './embedded-writer.js';
import { GroupCommit } from '../db/group-commit.js';
import { PendingGauge } from './pending-gauge.js';
import {
  BufferFullError,
  BufferUnavailableError,
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
  /** Where the appends and drains are written; by default on `db` in this thread. */
  writer?: BufferWriter;
}

/**
 * The default buffer: a durable table in the main database, or on a SQLite file with its writer
 * threads, in a file of its own beside it (buffer-file.ts). Concurrent requests are appended
 * by group commit (one transaction, one fsync for many requests) together with their
 * de-duplication keys, so a 202 always follows a commit that holds both.
 */
export class EmbeddedEventBuffer implements EventBuffer {
  readonly kind = 'embedded' as const;
  readonly #options: EmbeddedBufferOptions;
  readonly #group: GroupCommit<BufferedEvent[], AppendOutcome[]>;
  readonly #gauge: PendingGauge;
  readonly #writer: BufferWriter;

  constructor(options: EmbeddedBufferOptions) {
    this.#options = options;
    this.#writer = options.writer ?? new InlineBufferWriter(options.db, options.seam);
    this.#group = new GroupCommit({
      commit: (groups) => this.#commit(groups),
      weigh: (events) => events.length,
      maxWeight: MAX_EVENTS_PER_GROUP,
      maxInFlight: this.#writer.groupsInFlight,
    });
    this.#gauge = new PendingGauge(() => this.#writer.countPending());
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
    const committed = await this.#writer.append(groups, this.#options.clock.now());
    this.#gauge.add(committed.accepted);
    return committed.outcomes;
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    try {
      const result = await this.#writer.drain(persist, maxEvents);
      this.#gauge.add(-result.drained);
      return result;
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async status(): Promise<BufferStatus> {
    try {
      const pending = await this.#writer.countPending();
      this.#gauge.set(pending);
      return { kind: this.kind, pending, max_pending: this.#options.maxPending };
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async purgeExpiredKeys(now: number): Promise<number> {
    try {
      return await this.#writer.purgeExpiredKeys(now);
    } catch (error) {
      throw this.#translate(error);
    }
  }

  async open(): Promise<void> {
    // Nothing to connect: the buffer's file is opened with the database (buffer/index.ts).
  }

  async close(): Promise<void> {
    await this.#group.idle();
    await this.#writer.close();
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

import type { Executor } from '../db/database.js';

/**
 * One validated event on its way to the events table. It is already in the final row's shape:
 * the id is assigned when the event is acknowledged, so moving it twice (a drainer that died
 * after its commit but before acknowledging) inserts it once.
 */
export interface BufferedEvent {
  id: string;
  workspace_id: string;
  unit_id: string;
  event_key: string;
  /** JSON text of the properties object. */
  properties: string;
  occurred_at: number;
  received_at: number;
  late: 0 | 1;
  client_event_id: string | null;
}

/** What became of one appended event: buffered now, or a repeat of a client_event_id already seen. */
export type AppendOutcome = 'accepted' | 'replay';

/**
 * The name a function has in the writer thread's registry of tasks (WriterTasks, built by the
 * composition root in app/writer-tasks.ts): how a thread that has none of the caller's functions
 * finds one.
 */
export type WriterTaskName = string;

/**
 * Writes drained events to their final table inside the drainer's transaction. A function with a
 * name in the writer thread's registry (`writerTask`) can also run on the buffer's writer thread.
 */
export type PersistEvents = ((executor: Executor, events: BufferedEvent[], options?: PersistOptions) => Promise<void>) & { writerTask?: WriterTaskName };

/**
 * Where drained events are kept: the primary database's events table, or a store outside it
 * (ClickHouse, VERDICT_CLICKHOUSE_URL) that also holds a copy of the exposures. Chosen once at
 * start-up, so the drainer and retention never ask which one they have.
 */
export interface EventStorage {
  /** Writes a drained batch (the drainer's `persist`). */
  readonly persist: PersistEvents;
  /** The store outside the primary database, or null when events live in the events table alone. */
  readonly outside: OutsideEventStore | null;
}

/** What retention removes from a store of events outside the primary database. */
export interface OutsideEventStore {
  /** Removes a workspace's events that occurred before `before`; returns how many. */
  deleteEvents(workspaceId: string, before: number): Promise<number>;
  /** Removes the copy of an experiment's exposures (and what says how far it was copied); returns how many rows went. */
  deleteExposureCopy(experimentId: string): Promise<number>;
}

export interface PersistOptions {
  /**
   * The events were delivered before and may already be committed (Redis: a drainer that died, or
   * failed, between the database's commit and the buffer's acknowledgement). The events table's
   * primary key stores such a repeat never; ClickHouse's drain looks them up (clickhouse/events.ts).
   */
  redelivered?: boolean;
}

export interface DrainResult {
  /** Events moved to the events table (and released from the buffer) by this call. */
  drained: number;
  /** True when the call stopped at its limit and more is waiting: drain again at once. */
  more: boolean;
}

export interface BufferStatus {
  kind: 'embedded' | 'redis';
  /** Acknowledged events not yet in the events table. */
  pending: number;
  max_pending: number;
}

/**
 * The pending-event buffer between the 202 and the events table. Implementations keep an
 * event durable from the moment `append` resolves until `drain` has committed it to the
 * database, and de-duplicate on (workspace, client_event_id) atomically with the append.
 */
export interface EventBuffer {
  readonly kind: BufferStatus['kind'];
  /**
   * Appends events durably and resolves only after they are safe, with one outcome per event.
   * Throws BufferFullError above the pending limit, BufferUnavailableError when the store
   * cannot be reached.
   */
  append(events: BufferedEvent[]): Promise<AppendOutcome[]>;
  /**
   * Moves buffered events into `persist`, committing at most `maxEvents` per transaction, and
   * releases them from the buffer only after that commit.
   */
  drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult>;
  status(): Promise<BufferStatus>;
  /** Forgets de-duplication keys older than their window (stores without expiry of their own). */
  purgeExpiredKeys(now: number): Promise<number>;
  /** Connects and runs start-up checks; logs instead of failing when the store is down. */
  open(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How long a client_event_id is remembered: the one owner of the de-duplication window. The
 * buffers (embedded and Redis), the drainer's reuse check and the API's descriptions read it.
 */
export const DEDUPE_WINDOW_DAYS = 30;
export const DEDUPE_WINDOW_MS = DEDUPE_WINDOW_DAYS * 24 * 60 * 60 * 1000;

export class BufferFullError extends Error {
  constructor(
    readonly pending: number,
    readonly maxPending: number,
  ) {
    super(`the event buffer holds ${pending} pending events, above the limit of ${maxPending}`);
    this.name = 'BufferFullError';
  }
}

export { BufferUnavailableError } from './errors.js';

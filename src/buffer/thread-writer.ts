import { Worker, type WorkerOptions } from 'node:worker_threads';
import type { Db } from '../db/database.js';
import type { WriteRunner, WriteTask } from '../db/write-tasks.js';
import { countPending } from './embedded-store.js';
import type { BufferWriter, CommittedGroup } from './embedded-writer.js';
import { BufferUnavailableError, type BufferedEvent, type DrainResult, type PersistEvents } from './types.js';
import type { WriterReply, WriterRequest, WriterStatsMessage } from './writer-thread-protocol.js';
import type { WriterStats } from './writer-stats.js';

interface Pending {
  worker: Worker;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Most events one drain transaction moves on the thread while the backlog is short. A drain
 * holds SQLite's one write lock and the appends queued behind it wait: 100 events (one chunk)
 * take 5-12 ms on a table of millions, where the configured batch (10,000 by default) held every
 * ingest request for a second. The drainer asks again at once while more is waiting, and appends
 * go in between.
 */
const DRAIN_SLICE = 100;
/**
 * Above this many pending events a drain moves up to BACKLOG_SLICE: small transactions rewrite
 * the events table's scattered index pages once per transaction, so they move fewer events per
 * second, and a backlog this long means ingest outruns them (batch requests). Not the configured
 * batch: a drain of 10,000 events took 0.7 s in a soak, and every event waited behind it.
 */
const BACKLOG = 2_000;
const BACKLOG_SLICE = 1_000;

export type SpawnThread = (url: URL, options: WorkerOptions) => Worker;

/** Request types without the id the writer adds. */
type Call = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The embedded buffer's writes on a thread of their own, over their own connection to the same
 * SQLite file. better-sqlite3 runs every statement and every commit's fsync synchronously, so on
 * the API's thread each group commit and each drain round stopped every request in flight,
 * cached assignment hits included. Here the API's thread only posts the events and waits.
 * SQLite lets one writer at a time into the file; the API's own writes and this thread's take
 * turns on its lock (see PatientConnection in db/sqlite.ts).
 *
 * The thread starts on the first append, or on the first drain that finds chunks, so a process
 * that never ingests never starts it. If it dies, the calls in flight fail as unavailable (the
 * caller answers 503; nothing was acknowledged) and the next call starts a new one.
 */
export class ThreadBufferWriter implements BufferWriter, WriteRunner {
  // The thread joins the groups it receives while a commit runs into its next one, so handing
  // them over at once keeps it from idling while this thread answers the last group's requests.
  readonly groupsInFlight = 8;
  readonly #file: string;
  /** The API's connection, for the cheap count of what is pending before a drain (no thread while it is 0). */
  readonly #db: Db;
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  readonly #spawn: SpawnThread;
  #statsListener: ((stats: WriterStats) => void) | null = null;

  /** `spawn` starts the thread (a parameter so a test can hold the thread it started). */
  constructor(file: string, db: Db, spawn: SpawnThread = (url, options) => new Worker(url, options)) {
    this.#file = file;
    this.#db = db;
    this.#spawn = spawn;
  }

  append(groups: BufferedEvent[][], now: number): Promise<CommittedGroup> {
    return this.#call({ op: 'append', groups, now }) as Promise<CommittedGroup>;
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    if (!persist.location) throw new Error('the writer thread can only drain into a persist function that names its module (PersistEvents.location)');
    // An idle drainer polls every few milliseconds: answer "nothing" without the thread.
    const pending = await countPending(this.#db);
    if (pending === 0) return { drained: 0, more: false };
    const slice = Math.min(maxEvents, pending > BACKLOG ? BACKLOG_SLICE : DRAIN_SLICE);
    return (await this.#call({ op: 'drain', persist: persist.location, maxEvents: slice })) as DrainResult;
  }

  /** A write transaction of the API's on the thread (db/write-tasks.ts); it queues with the appends for SQLite's one write lock. */
  run<Input, Result>(task: WriteTask<Input, Result>, input: Input): Promise<Result> {
    return this.#call({ op: 'write', task: task.location, input }) as Promise<Result>;
  }

  /** On the thread too: an hour's expired keys can take many transactions to delete. */
  purgeExpiredKeys(now: number): Promise<number> {
    return this.#call({ op: 'purge', now }) as Promise<number>;
  }

  /** Hears the thread's time per kind of work, about once a second while it works (the /metrics figures). */
  onStats(listener: (stats: WriterStats) => void): void {
    this.#statsListener = listener;
  }

  /** Lets the thread finish what it was sent, closes its connection, and ends it. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    try {
      await this.#call({ op: 'close' });
    } finally {
      this.#worker = null;
      await worker.terminate();
    }
  }

  #call(request: Call): Promise<unknown> {
    const worker = this.#worker ?? this.#start();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { worker, resolve, reject });
      worker.postMessage({ ...request, id } as WriterRequest);
    });
  }

  #start(): Worker {
    const worker = this.#spawn(new URL('./writer-thread.js', import.meta.url), { workerData: { file: this.#file } });
    worker.on('message', (message: WriterReply | WriterStatsMessage) => {
      if ('stats' in message) this.#statsListener?.(message.stats);
      else this.#settle(message);
    });
    worker.on('error', (error) => this.#fail(worker, error));
    worker.on('exit', (code) => this.#fail(worker, new Error(`the writer thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (reply.error) pending.reject(Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
    else pending.resolve(reply.result);
  }

  /** The thread is gone: nothing it was sent can still be acknowledged, so every call in flight fails. */
  #fail(worker: Worker, cause: Error): void {
    if (this.#worker === worker) this.#worker = null;
    for (const [id, pending] of this.#pending) {
      if (pending.worker !== worker) continue;
      this.#pending.delete(id);
      pending.reject(new BufferUnavailableError('the event buffer writer thread stopped', { cause }));
    }
  }
}

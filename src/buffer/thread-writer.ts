import { Worker, type WorkerOptions } from 'node:worker_threads';
import { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { sqliteDialectOn } from '../db/sqlite.js';
import { bufferFileOf, openBufferFile } from './buffer-file.js';
import type { WriteRunner, WriteTask } from '../db/write-tasks.js';
import { countPending } from './embedded-store.js';
import type { BufferWriter, CommittedGroup, StoredDrain } from './embedded-writer.js';
import { BufferUnavailableError, type BufferedEvent, type DrainResult, type PersistEvents } from './types.js';
import { ROLE_OF, type WriterReply, type WriterRequest, type WriterRole, type WriterStatsMessage, type WriterThreadData } from './writer-thread-protocol.js';
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
 * The embedded buffer's writes on threads of their own, over their own connections, with the
 * buffer's tables in a file of their own (buffer-file.ts). better-sqlite3 runs every statement
 * and every commit's fsync synchronously, so on the API's thread each group commit and each drain
 * round stopped every request in flight, cached assignment hits included. Here the API's thread
 * only posts the events and waits: appends go to the `buffer` thread, drains and the API's other
 * acknowledged writes to the `main` one (writer-thread-protocol.ts), and neither waits for the
 * other's work or lock. Other processes' writes take turns with them on each file's lock (see
 * PatientConnection in db/sqlite.ts).
 *
 * A thread starts on its first request, so a command that never ingests starts neither, and a
 * drain that finds nothing buffered starts none; `serve` starts both before it listens (warm).
 * If a thread dies, the calls in flight on it fail as unavailable (the caller answers 503;
 * nothing was acknowledged) and the next call starts a new one.
 */
export class ThreadBufferWriter implements BufferWriter, WriteRunner {
  // The thread joins the groups it receives while a commit runs into its next one, so handing
  // them over at once keeps it from idling while this thread answers the last group's requests.
  readonly groupsInFlight = 8;
  readonly #file: string;
  /** The API thread's connection to the buffer's file, for the cheap count of what is pending. */
  readonly #buffer: Db;
  readonly #workers = new Map<WriterRole, Worker>();
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  readonly #spawn: SpawnThread;
  #statsListener: ((stats: WriterStats) => void) | null = null;

  readonly #entry: URL;

  /**
   * `file` is the main database's; `entry` the threads' entry module, which starts them with the
   * registry of tasks (app/writer-thread.js); `spawn` starts a thread (a parameter so a test can
   * hold the threads it started).
   */
  constructor(file: string, entry: URL, spawn: SpawnThread = (url, options) => new Worker(url, options)) {
    this.#file = file;
    this.#entry = entry;
    this.#buffer = new Kysely<Database>({ dialect: sqliteDialectOn(() => openBufferFile(bufferFileOf(file))) });
    this.#spawn = spawn;
  }

  append(groups: BufferedEvent[][], now: number): Promise<CommittedGroup> {
    return this.#call({ op: 'append', groups, now }) as Promise<CommittedGroup>;
  }

  async drain(persist: PersistEvents, maxEvents: number): Promise<DrainResult> {
    if (!persist.writerTask) throw new Error('the writer thread can only drain into a persist function of its registry (PersistEvents.writerTask)');
    // An idle drainer polls every few milliseconds: answer "nothing" without the thread.
    const pending = await this.countPending();
    if (pending === 0) return { drained: 0, more: false };
    const slice = Math.min(maxEvents, pending > BACKLOG ? BACKLOG_SLICE : DRAIN_SLICE);
    const stored = (await this.#call({ op: 'drain', persist: persist.writerTask, maxEvents: slice })) as StoredDrain;
    if (stored.ids.length === 0) return { drained: 0, more: false };
    // Deleted by the buffer's thread, which takes that file's lock in turn with its appends.
    const drained = (await this.#call({ op: 'release', ids: stored.ids })) as number;
    return { drained, more: stored.more };
  }

  countPending(): Promise<number> {
    return countPending(this.#buffer);
  }

  /** A write transaction of the API's on the main writer thread (db/write-tasks.ts); it queues with the drains for the main file's write lock. */
  run<Input, Result>(task: WriteTask<Input, Result>, input: Input): Promise<Result> {
    return this.#call({ op: 'write', task: task.writerTask, input }) as Promise<Result>;
  }

  warm(): void {
    for (const role of ['buffer', 'main'] as const) if (!this.#workers.has(role)) this.#start(role);
  }

  /** On the buffer's thread: an hour's expired keys can take many transactions to delete. */
  purgeExpiredKeys(now: number): Promise<number> {
    return this.#call({ op: 'purge', now }) as Promise<number>;
  }

  /** Hears the threads' time per kind of work, about once a second while they work (the /metrics figures). */
  onStats(listener: (stats: WriterStats) => void): void {
    this.#statsListener = listener;
  }

  /** Lets each thread finish what it was sent, closes its connections, and ends it. */
  async close(): Promise<void> {
    try {
      await Promise.all([...this.#workers].map(([role, worker]) => this.#closeThread(role, worker)));
    } finally {
      await this.#buffer.destroy();
    }
  }

  async #closeThread(role: WriterRole, worker: Worker): Promise<void> {
    try {
      await this.#post(worker, { op: 'close' });
    } finally {
      if (this.#workers.get(role) === worker) this.#workers.delete(role);
      await worker.terminate();
    }
  }

  #call(request: Exclude<Call, { op: 'close' }>): Promise<unknown> {
    const role = ROLE_OF[request.op];
    return this.#post(this.#workers.get(role) ?? this.#start(role), request);
  }

  #post(worker: Worker, request: Call): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { worker, resolve, reject });
      worker.postMessage({ ...request, id } as WriterRequest);
    });
  }

  #start(role: WriterRole): Worker {
    const workerData: WriterThreadData = { role, file: this.#file };
    const worker = this.#spawn(this.#entry, { workerData, name: `verdict-${role}-writer` });
    worker.on('message', (message: WriterReply | WriterStatsMessage) => {
      if ('stats' in message) this.#statsListener?.(message.stats);
      else this.#settle(message);
    });
    worker.on('error', (error) => this.#fail(role, worker, error));
    worker.on('exit', (code) => this.#fail(role, worker, new Error(`the ${role} writer thread exited with code ${code}`)));
    this.#workers.set(role, worker);
    return worker;
  }

  #settle(reply: WriterReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (reply.error) pending.reject(Object.assign(new Error(reply.error.message), reply.error.code ? { code: reply.error.code } : {}));
    else pending.resolve(reply.result);
  }

  /** The thread is gone: nothing it was sent can still be acknowledged, so every call in flight on it fails. */
  #fail(role: WriterRole, worker: Worker, cause: Error): void {
    if (this.#workers.get(role) === worker) this.#workers.delete(role);
    for (const [id, pending] of this.#pending) {
      if (pending.worker !== worker) continue;
      this.#pending.delete(id);
      pending.reject(new BufferUnavailableError(`the event buffer's ${role} writer thread stopped`, { cause }));
    }
  }
}

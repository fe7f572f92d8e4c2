import type { WriterTaskName } from '../buffer/types.js';
import type { Db, Tx } from './database.js';

/**
 * The body of a write transaction that may run on another thread: it carries its name in the
 * writer thread's registry of tasks (app/writer-tasks.ts), where that thread finds it, and its
 * input and result are plain data (structured clone).
 */
export type WriteTask<Input, Result> = ((trx: Tx, input: Input) => Promise<Result>) & { writerTask: WriterTaskName };

/**
 * Where the API's acknowledged writes run. On a SQLite file, the event buffer's writer thread:
 * better-sqlite3 runs each statement and each commit's fsync synchronously, and a commit can
 * also run a WAL checkpoint, so on the API's thread a commit stopped every request in flight
 * (hundreds of milliseconds on a busy disk; docs/benchmarks.md "Latency under sustained load").
 * Elsewhere, a transaction on the caller's database.
 */
export interface WriteRunner {
  run<Input, Result>(task: WriteTask<Input, Result>, input: Input): Promise<Result>;
  /**
   * Starts the runner's threads now instead of at their first request. `serve` does, before it
   * listens: a thread loading its modules under load held the first second of requests.
   */
  warm?(): void;
}

export function inlineWrites(db: Db): WriteRunner {
  return { run: (task, input) => db.transaction().execute((trx) => task(trx, input)) };
}

/**
 * A write task that writes nothing. Awaited on a runner, it returns once the runner's thread has
 * started and answered: a benchmark starts its clock after it, as `serve` starts the threads
 * before it listens (warm), so a thread's start (loading its modules) is not timed as the work.
 */
export const nothingToWrite: WriteTask<null, null> = Object.assign(async () => null, {
  writerTask: 'writes.nothing',
});

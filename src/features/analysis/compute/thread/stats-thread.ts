/**
 * Where a snapshot's statistics run. Exact Beta sums, seeded Monte Carlo and interval roots take
 * tens of milliseconds per metric or slice on a large experiment; on the API's thread each of
 * those stretches is a stall for every request waiting behind it. So they run on one statistics
 * thread at a lower priority (src/lib/nice-thread.js), and the API's thread only sends the totals
 * and receives the answer (docs/benchmarks.md "Latency under sustained load").
 *
 * One thread serves the whole process, started on the first snapshot and kept: its start (about
 * half a second, the TypeScript loader included) is paid once, not per snapshot or per app.
 */
import { Worker } from 'node:worker_threads';
import { runStatsTask, type StatsInput, type StatsOutput, type StatsTaskName } from './stats-tasks.js';

export interface StatsRunner {
  run<K extends StatsTaskName>(name: K, input: StatsInput<K>): Promise<StatsOutput<K>>;
}

/** On the caller's thread (VERDICT_ANALYSIS_THREADS=0). */
export const inlineStats: StatsRunner = { run: runStatsTask };

interface Pending {
  resolve: (output: never) => void;
  reject: (error: Error) => void;
}

interface Reply {
  id: number;
  output?: unknown;
  error?: { name: string; message: string };
}

export class StatsThread implements StatsRunner {
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  run<K extends StatsTaskName>(name: K, input: StatsInput<K>): Promise<StatsOutput<K>> {
    return new Promise<StatsOutput<K>>((resolve, reject) => {
      const worker = this.#started();
      const id = this.#nextId++;
      this.#pending.set(id, { resolve: resolve as (output: never) => void, reject });
      // A thread with work in hand keeps the process alive (a CLI command awaiting its snapshot
      // has nothing else pending); an idle one does not.
      worker.ref();
      try {
        worker.postMessage({ id, task: name, input });
      } catch (error) {
        this.#settle(id);
        reject(error as Error);
      }
    });
  }

  /** Tasks in flight (tests and diagnostics). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Stops the thread; tasks in flight fail, and the next task starts a new one. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    await worker.terminate();
    this.#failAll(worker, new Error('the statistics thread was closed'));
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./stats-worker.js', import.meta.url));
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = this.#settle(reply.id);
      if (!pending) return;
      if (reply.error) pending.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
      else pending.resolve(reply.output as never);
    });
    worker.on('error', (error) => this.#failAll(worker, error));
    worker.on('exit', (code) => this.#failAll(worker, new Error(`the statistics thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
    return pending;
  }

  /** A thread that died fails what it held; the next task starts a new one. */
  #failAll(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    const failed = [...this.#pending.values()];
    this.#pending.clear();
    for (const pending of failed) pending.reject(error);
  }
}

let shared: StatsThread | null = null;

/** The process's statistics thread, or the caller's own thread when analysis threads are off. */
export function statsRunnerFor(threads: number): StatsRunner {
  if (threads <= 0) return inlineStats;
  shared ??= new StatsThread();
  return shared;
}

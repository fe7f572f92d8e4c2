import { Worker } from 'node:worker_threads';
import { CompiledQuery, sql } from 'kysely';
import type { Db } from './database.js';

type Row = Record<string, unknown>;

/**
 * Where long analytical reads run (the analysis aggregates). SQLite answers them on worker
 * threads with read-only connections, in parallel, so the API's event loop and its one write
 * connection stay free; PostgreSQL runs them on the server with settings fit for one big
 * aggregation.
 */
export interface ReadPool {
  /** Runs read-only queries and returns each one's rows, in the order given. */
  all(queries: readonly CompiledQuery[]): Promise<Row[][]>;
  close(): Promise<void>;
}

/** On the caller's connection, one after another: in-memory SQLite, or threads turned off. */
export function inlineReads(db: Db): ReadPool {
  return {
    async all(queries) {
      const results: Row[][] = [];
      for (const query of queries) results.push([...(await db.executeQuery<Row>(query)).rows]);
      return results;
    },
    async close() {},
  };
}

/**
 * PostgreSQL: each query in its own read-only transaction with a larger work_mem, so the
 * per-unit hash aggregate of a big experiment stays in memory instead of spilling to disk, and
 * without JIT, whose compile time buys nothing on these plans.
 */
export function postgresReads(db: Db, workMem: string): ReadPool {
  return {
    async all(queries) {
      return Promise.all(
        queries.map((query) =>
          db
            .transaction()
            .setAccessMode('read only')
            .execute(async (trx) => {
              await sql`SELECT set_config('work_mem', ${workMem}, true), set_config('jit', 'off', true)`.execute(trx);
              return [...(await trx.executeQuery<Row>(query)).rows];
            }),
        ),
      );
    },
    async close() {},
  };
}

interface Pending {
  resolve: (rows: Row[]) => void;
  reject: (error: Error) => void;
}

interface Reply {
  rows?: Row[];
  error?: { message: string; code?: string };
}

export interface ThreadReadOptions {
  /**
   * Whether the threads run at a background priority (lib/nice-thread.js): yes for the analysis's
   * reads, no for reads a request waits on (side-reads.ts). Default true.
   */
  background?: boolean;
}

/**
 * SQLite file databases: up to `threads` worker threads, started on first use, each running one
 * query at a time on its own read-only connection (WAL lets readers run beside the writer).
 */
export class SqliteThreadReads implements ReadPool {
  readonly #file: string;
  readonly #threads: number;
  readonly #background: boolean;
  readonly #idle: Worker[] = [];
  readonly #waiting: Array<(worker: Worker) => void> = [];
  /** The query each busy thread is answering. */
  readonly #busy = new Map<Worker, Pending>();
  #started = 0;
  #closed = false;

  constructor(file: string, threads: number, options: ThreadReadOptions = {}) {
    this.#file = file;
    this.#threads = threads;
    this.#background = options.background ?? true;
  }

  async all(queries: readonly CompiledQuery[]): Promise<Row[][]> {
    return Promise.all(queries.map((query) => this.#run(query)));
  }

  async #run(query: CompiledQuery): Promise<Row[]> {
    const worker = await this.#acquire();
    try {
      // A busy thread keeps the process alive (a command awaiting its answer has nothing else
      // pending); an idle one does not.
      worker.ref();
      return await new Promise<Row[]>((resolve, reject) => {
        this.#busy.set(worker, { resolve, reject });
        worker.postMessage({ sql: query.sql, parameters: query.parameters });
      });
    } finally {
      worker.unref();
      this.#busy.delete(worker);
      this.#release(worker);
    }
  }

  async #acquire(): Promise<Worker> {
    if (this.#closed) throw new Error('the read pool is closed');
    const idle = this.#idle.pop();
    if (idle) return idle;
    if (this.#started < this.#threads) return this.#spawn();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(worker: Worker): void {
    if (worker.threadId < 0) return; // exited; a waiting caller gets a fresh thread instead
    if (this.#closed) {
      void worker.terminate();
      return;
    }
    const next = this.#waiting.shift();
    if (next) next(worker);
    else this.#idle.push(worker);
  }

  #spawn(): Worker {
    this.#started += 1;
    const worker = new Worker(new URL('./sqlite-read-worker.js', import.meta.url), { workerData: { file: this.#file, background: this.#background } });
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const pending = this.#busy.get(worker);
      if (reply.error) pending?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      else pending?.resolve(reply.rows ?? []);
    });
    worker.on('error', (error) => this.#busy.get(worker)?.reject(error));
    worker.on('exit', (code) => {
      this.#started -= 1;
      const index = this.#idle.indexOf(worker);
      if (index >= 0) this.#idle.splice(index, 1);
      this.#busy.get(worker)?.reject(new Error(`a SQLite read thread exited (code ${code})`));
      const next = !this.#closed && this.#waiting.shift();
      if (next) next(this.#spawn());
    });
    return worker;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const workers = [...this.#idle];
    this.#idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
}

import type { CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import { SqliteThreadReads } from './read-pool.js';

/**
 * Single-row reads on a hot path that must not queue behind the API's own SQLite connection.
 * Kysely hands that one connection to one caller at a time, and a transaction holds it across
 * event-loop turns (an admin mutation, an exposure logged), so a sticky-cache miss read there
 * waits for all of it. SQLite: read-only connections on threads of their own (in WAL mode a
 * reader never waits for a writer); PostgreSQL: the pool, which has many connections.
 */
export interface SideReads {
  /** The first row of a compiled read, or undefined. */
  first<R>(query: CompiledQuery<R>): Promise<R | undefined>;
  close(): Promise<void>;
}

/** Reads through Kysely itself: PostgreSQL's pool, or an in-memory SQLite (a second connection would open another database). */
export function kyselySideReads(db: Db): SideReads {
  return {
    first: async <R>(query: CompiledQuery<R>) => (await db.executeQuery(query)).rows[0],
    close: async () => undefined,
  };
}

/**
 * Threads for a SQLite file's side reads. A read on the API's thread held its event loop whenever
 * the page it needed was not in memory: in a soak on a VM whose host reclaims idle page cache, the
 * API thread was found waiting in `pread` on the database file (uninterruptible, sampled every 5
 * ms) for up to 160 ms at a time while checkpoints kept the disk busy, and every request in flight
 * waited with it (docs/benchmarks.md "Latency under sustained load"). Two threads, so that one
 * read waiting for the disk leaves the other answering the misses whose pages are in memory; at
 * the serving priority, as a request waits on each read.
 */
const SIDE_READ_THREADS = 2;

/** A SQLite file's side reads, on threads of their own (read-pool.ts), each thread started at first use (after the migrations). */
export function sqliteSideReads(file: string): SideReads {
  const threads = new SqliteThreadReads(file, SIDE_READ_THREADS, { background: false });
  return {
    async first<R>(query: CompiledQuery<R>): Promise<R | undefined> {
      const [rows = []] = await threads.all([query]);
      return rows[0] as R | undefined;
    },
    close: () => threads.close(),
  };
}

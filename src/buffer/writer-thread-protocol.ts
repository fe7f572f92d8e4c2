import type { WriteTask } from '../db/write-tasks.js';
import type { BufferedEvent, PersistEvents, WriterTaskName } from './types.js';
import type { WriterStats } from './writer-stats.js';

/**
 * The two writer threads: `buffer` appends events and their de-duplication keys to the buffer's
 * own file, deletes the chunks a drain stored and purges expired keys; `main` drains the buffer
 * into the events table and runs the API's other acknowledged writes (first assignments) on the
 * main file. Each holds only its own file's write lock, so an acknowledgement never waits for a
 * drain.
 */
export type WriterRole = 'buffer' | 'main';

/** What a writer thread is started with: its role and the main database's file (the buffer's is beside it). */
export interface WriterThreadData {
  role: WriterRole;
  file: string;
}

/** The thread each request runs on; `close` goes to every thread (ThreadBufferWriter.close). */
export const ROLE_OF: Record<Exclude<WriterRequest['op'], 'close'>, WriterRole> = {
  append: 'buffer',
  purge: 'buffer',
  release: 'buffer',
  drain: 'main',
  write: 'main',
};

/** What the API's thread asks the buffer's writer thread (thread-writer.ts, writer-thread-main.ts). */
export type WriterRequest =
  | { id: number; op: 'append'; groups: BufferedEvent[][]; now: number }
  | { id: number; op: 'drain'; persist: WriterTaskName; maxEvents: number }
  | { id: number; op: 'purge'; now: number }
  | { id: number; op: 'release'; ids: string[] }
  | { id: number; op: 'write'; task: WriterTaskName; input: unknown }
  | { id: number; op: 'close' };

/** The answer to request `id`: its result, or the error it failed with (code kept, for SQLITE_BUSY). */
export type WriterReply = { id: number; result?: unknown; error?: { message: string; code?: string } };

/** Sent by the thread unasked, about once a second while it works: its time per kind of work. */
export type WriterStatsMessage = { stats: WriterStats };

/**
 * What the main writer thread can run, by name: the drain's persist functions and the write
 * tasks. The composition root lists them (app/writer-tasks.ts) and starts the thread with them,
 * so the buffer knows no slice and every function a thread runs is named in one place.
 */
export interface WriterTasks {
  persist: Readonly<Record<WriterTaskName, PersistEvents>>;
  // Each task has its own input and result, which only its caller knows.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  write: Readonly<Record<WriterTaskName, WriteTask<any, any>>>;
}

/** The task named `name` of `kind`, or an error naming what is missing. */
export function writerTaskOf<K extends keyof WriterTasks>(tasks: WriterTasks, kind: K, name: WriterTaskName): WriterTasks[K][string] {
  const task = Object.hasOwn(tasks[kind], name) ? tasks[kind][name] : undefined;
  if (!task) throw new Error(`no ${kind} task named ${name} in the writer thread's registry (app/writer-tasks.ts)`);
  return task as WriterTasks[K][string];
}

import type { BufferedEvent, ModuleExport } from './types.js';
import type { WriterStats } from './writer-stats.js';

/** What the API's thread asks the buffer's writer thread (thread-writer.ts, writer-thread-main.ts). */
export type WriterRequest =
  | { id: number; op: 'append'; groups: BufferedEvent[][]; now: number }
  | { id: number; op: 'drain'; persist: ModuleExport; maxEvents: number }
  | { id: number; op: 'purge'; now: number }
  | { id: number; op: 'write'; task: ModuleExport; input: unknown }
  | { id: number; op: 'close' };

/** The answer to request `id`: its result, or the error it failed with (code kept, for SQLITE_BUSY). */
export type WriterReply = { id: number; result?: unknown; error?: { message: string; code?: string } };

/** Sent by the thread unasked, about once a second while it works: its time per kind of work. */
export type WriterStatsMessage = { stats: WriterStats };

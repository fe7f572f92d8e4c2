/**
 * Everything the buffer's main writer thread runs, by name (as compute/thread/stats-tasks.ts names the
 * statistics thread's work): the drain into the events table and the API's acknowledged writes
 * (first assignments, holdouts' first contacts, the analysis's build steps and refresh rounds on SQLite). A function sent
 * to the thread carries its name here (`writerTask`); writer-tasks.test.ts holds each name to its
 * entry.
 */
import type { WriterTasks } from '../buffer/writer-thread-protocol.js';
import { nothingToWrite } from '../db/write-tasks.js';
import { refreshOnSqlite } from '../features/analysis/sql/rollup/refresh.js';
import { buildStep } from '../features/analysis/sql/rollup/steps.js';
import { writeFirstAssignments } from '../features/assignment/first-writes.js';
import { insertEvents } from '../features/events/store.js';
import { writeHoldoutContacts } from '../features/holdouts/contacts.js';

export const writerTasks: WriterTasks = {
  persist: { [insertEvents.writerTask!]: insertEvents },
  write: Object.fromEntries([nothingToWrite, writeFirstAssignments, buildStep, refreshOnSqlite, writeHoldoutContacts].map((task) => [task.writerTask, task])),
};

/** The writer threads' entry module: it starts each thread with these tasks. */
export const WRITER_THREAD_ENTRY = new URL('./writer-thread.js', import.meta.url);

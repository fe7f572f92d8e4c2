import { parentPort, workerData } from 'node:worker_threads';
import type { WriterReply, WriterRequest, WriterStatsMessage, WriterTasks, WriterThreadData } from './writer-thread-protocol.js';
import { WriterTallies } from './writer-stats.js';
import { startRole } from './writer-thread-roles.js';

/**
 * Runs on a writer thread: the role it was started for (writer-thread-roles.ts), on its own
 * connections, with the tasks the composition root registered (app/writer-thread-main.ts).
 */
export function runWriterThread(tasks: WriterTasks): void {
  const port = parentPort;
  if (!port) throw new Error('a writer thread runs only as a worker thread');
  const { role, file } = workerData as WriterThreadData;
  const tallies = new WriterTallies();
  const work = startRole(role, file, tallies, tasks);
  const { connection } = work;

  // Checkpoints belong on the writer threads, each for its own file: a checkpoint runs inside
  // whichever commit passes the WAL's threshold, and on the API thread that held every request
  // while it copied pages and synced, so app/context.ts raises the API connection's threshold tenfold.
  // This thread's own commits checkpoint at SQLite's default; the timer covers a WAL grown by the
  // API thread's commits alone while no event arrives. PASSIVE never waits for readers or writers.
  // (A checkpointer thread of its own, copying the WAL beside this thread's commits, was tried and
  // removed: it copied hot pages ten times as often, and in a soak the process's heap grew by
  // 400 MB in four minutes while single events answered no faster; docs/events.md "Checkpoints".)
  const CHECKPOINT_EVERY_MS = 5_000;
  setInterval(() => {
    if (connection.inTransaction) return;
    const started = performance.now();
    try {
      connection.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or locked: the next tick, or this thread's next commit, tries again.
    }
    tallies.record('checkpoint', performance.now() - started);
  }, CHECKPOINT_EVERY_MS).unref();

  const STATS_EVERY_MS = 1_000;
  setInterval(() => {
    const stats = tallies.take();
    if (stats) port.postMessage({ stats } satisfies WriterStatsMessage);
  }, STATS_EVERY_MS).unref();

  port.on('message', (request: WriterRequest) => {
    work.answer(request).then(
      (result) => port.postMessage({ id: request.id, result } satisfies WriterReply),
      (error: unknown) => {
        const { message, code } = error as { message?: unknown; code?: unknown };
        const reply: WriterReply = { id: request.id, error: { message: String(message ?? error), ...(typeof code === 'string' ? { code } : {}) } };
        port.postMessage(reply);
      },
    );
  });
}

// Most of the SQLite file's checkpointing, on a thread of its own (started by the event buffer's
// writer thread, buffer/writer-thread-main.ts). Plain JavaScript: worker threads do not inherit
// the tsx loader. A checkpoint copies the WAL's pages into the database file and syncs it; run
// whole inside a commit of the writer thread (SQLite's automatic checkpoint, every 1,000 pages:
// about once a second under a steady ingest), it held every event queued behind that commit for
// tens of milliseconds. Here a PASSIVE checkpoint copies what the WAL holds beside the writer's
// commits (it takes no lock a writer needs), so the writer's own checkpoint has only the last
// few pages left to copy (docs/events.md "Checkpoints").
import { performance } from 'node:perf_hooks';
import { setInterval } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const db = new Database(workerData.file, { fileMustExist: true, timeout: 0 });
// Pages not yet copied past this many are copied at the next look; fewer, only every IDLE_MS.
const PAGES = 100;
const LOOK_EVERY_MS = 100;
const IDLE_MS = 5_000;
let lastCheckpoint = 0;

function walPages() {
  // wal_checkpoint(PASSIVE) both checkpoints and reports; this asks the size without copying.
  const [row] = db.pragma('wal_checkpoint(NOOP)');
  return row ? row.log - row.checkpointed : 0;
}

function look() {
  try {
    const now = performance.now();
    const pages = walPages();
    if (pages <= 0 || (pages < PAGES && now - lastCheckpoint < IDLE_MS)) return;
    db.pragma('wal_checkpoint(PASSIVE)');
    lastCheckpoint = performance.now();
    parentPort.postMessage({ checkpointMs: lastCheckpoint - now });
  } catch {
    // Busy (another checkpoint, a WAL being reset): the next look tries again.
  }
}

setInterval(look, LOOK_EVERY_MS);

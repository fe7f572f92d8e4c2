// A worker thread holding one read-only SQLite connection (see read-pool.ts). Plain JavaScript
// because worker threads do not inherit the tsx loader the main thread runs under.
import fs from 'node:fs';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

// The analysis yields the CPU to serving: on Linux a thread has its own nice value, and at 10 the
// kernel gives this one about a tenth of the CPU time of a thread at 0 when both want a core, so a
// snapshot takes longer on a busy machine while the API's thread and the event writer keep the
// cores they need, and it still runs at full speed on idle cores (docs/benchmarks.md "Latency
// under sustained load"). /proc/thread-self names this thread's id; elsewhere it keeps its priority.
const NICE = 10;
try {
  const threadId = Number(fs.readlinkSync('/proc/thread-self').split('/').at(-1));
  if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, NICE);
} catch {
  // not Linux, or not allowed: run at the process's priority
}

const db = new Database(workerData.file, { readonly: true, fileMustExist: true, timeout: 10_000 });
const statements = new Map();

parentPort.on('message', ({ sql, parameters }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    parentPort.postMessage({ rows: statement.all(...parameters) });
  } catch (error) {
    parentPort.postMessage({ error: { message: error.message, code: error.code } });
  }
});

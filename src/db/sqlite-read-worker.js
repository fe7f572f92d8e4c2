// A worker thread holding one read-only SQLite connection (see read-pool.ts). Plain JavaScript
// because worker threads do not inherit the tsx loader the main thread runs under.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { niceThisThread } from '../lib/nice-thread.js';

// The analysis yields the CPU to serving (src/lib/nice-thread.js); a request's reads do not.
if (workerData.background !== false) niceThisThread();

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

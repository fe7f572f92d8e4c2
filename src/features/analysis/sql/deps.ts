import type { Db } from '../../../db/database.js';
import type { BackgroundWrites } from '../../../db/background-writes.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import type { WriteRunner } from '../../../db/write-tasks.js';
import type { Clock } from '../../../lib/time.js';

/**
 * What the SQL store needs: the database and its read pool, the dialect, where its long writes
 * run (the writer thread on SQLite) and take turns, and the clock. Named here rather than picked
 * from the app's context, which builds the store.
 */
export interface SqlStoreDeps {
  db: Db;
  seam: DialectSeam;
  reads: ReadPool;
  writes: WriteRunner;
  background: BackgroundWrites;
  clock: Clock;
}

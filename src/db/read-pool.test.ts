import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from './sqlite.js';
import { SqliteThreadReads } from './read-pool.js';
import { threadNiceValues } from '../../test/support/threads.js';

describe('the SQLite read threads of the analysis', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-read-pool-'));
  let reads: SqliteThreadReads | undefined;
  afterEach(async () => {
    await reads?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it.runIf(process.platform === 'linux')('answer queries at a lower priority than the API thread, which keeps its own', async () => {
    const file = path.join(dir, 'reads.sqlite');
    const db = openSqlite(file);
    db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    db.close();
    const before = threadNiceValues();
    reads = new SqliteThreadReads(file, 2);
    const answers = await reads.all([CompiledQuery.raw('SELECT sum(n) AS total FROM t'), CompiledQuery.raw('SELECT count(*) AS rows FROM t')]);
    expect(answers).toEqual([[{ total: 6 }], [{ rows: 3 }]]);
    const after = threadNiceValues();
    expect(after.filter((nice) => nice === 10)).toHaveLength(2 + before.filter((nice) => nice === 10).length);
    expect(os.getPriority()).toBe(before[0]);
  });
});

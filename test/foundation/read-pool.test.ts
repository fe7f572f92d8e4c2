import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase, type DialectName, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';

function openerFor(dialect: DialectName) {
  const state: { database?: TestDatabase; handle?: DatabaseHandle } = {};
  afterEach(async () => {
    await state.handle?.destroy();
    await state.database?.drop();
    state.handle = undefined;
    state.database = undefined;
  });
  return async (threads: number): Promise<DatabaseHandle> => {
    state.database = await createTestDatabase(dialect);
    state.handle = openDatabase(state.database.config, { threads, workMem: '96MB' });
    await migrateToLatest(state.handle.db);
    return state.handle;
  };
}

describeEach('analytical read pool', {}, ({ dialect }) => {
  const open = openerFor(dialect);

  it('answers many queries with each one’s rows in the order given, including rows written just before', async () => {
    const { db, reads } = await open(2);
    await db.insertInto('workspaces').values({ id: 'ws_1', name: 'One', slug: 'one', webhook_secret_enc: 'x', created_at: 1 }).execute();
    const queries = Array.from({ length: 12 }, (_, n) => sql<{ n: number; name: string }>`SELECT ${sql.lit(n)} AS n, name FROM workspaces`.compile(db));
    const results = await reads.all(queries);
    expect(results.map((rows) => rows.map((row) => Number(row.n)))).toEqual(Array.from({ length: 12 }, (_, n) => [n]));
    expect(results.every((rows) => rows[0]?.name === 'One')).toBe(true);
  });

  it('rejects a failing query with the database’s error and keeps serving afterwards', async () => {
    const { db, reads } = await open(2);
    await expect(reads.all([sql`SELECT * FROM no_such_table`.compile(db)])).rejects.toThrow(/no_such_table/);
    const [rows] = await reads.all([sql<{ one: number }>`SELECT 1 AS one`.compile(db)]);
    expect(Number(rows?.[0]?.one)).toBe(1);
  });
});

describeEach('analytical reads', { dialects: ['postgres'] }, () => {
  const open = openerFor('postgres');

  it('runs PostgreSQL reads read-only with the configured work_mem', async () => {
    const { db, reads } = await open(0);
    const [rows] = await reads.all([sql`SELECT current_setting('work_mem') AS work_mem, current_setting('transaction_read_only') AS read_only`.compile(db)]);
    expect(rows?.[0]).toEqual({ work_mem: '96MB', read_only: 'on' });
  });
});

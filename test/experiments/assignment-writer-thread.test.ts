import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ThreadBufferWriter } from '../../src/buffer/thread-writer.js';
import { BufferUnavailableError } from '../../src/buffer/types.js';
import { sqliteSeam } from '../../src/db/dialect.js';
import { loadConfig } from '../../src/config.js';
import { API_THREAD_CHECKPOINT_PAGES } from '../../src/context.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { runningExperiment } from './helpers.js';

// On a SQLite file, first assignments are written on the event buffer's writer thread
// (db/write-tasks.ts): their statements, the commit's fsync and any WAL checkpoint it runs never
// hold the API's event loop or its connection. SQLite only: PostgreSQL writes on its pool.

describe.each([
  ['on the writer thread', true],
  ['on the API thread (VERDICT_BUFFER_WRITER_THREAD=0)', false],
])('first assignments on SQLite %s', (_label, writerThread) => {
  let server: TestServer;
  let key: string;
  let environmentId: string;

  beforeAll(async () => {
    server = await startTestServer('sqlite', { config: { events: { ...loadConfig({}).events, writerThread } } });
    ({ key, environmentId } = await server.bootstrap());
  });
  afterAll(async () => server.close());

  it('writes them where the configuration says', () => {
    expect(server.ctx.writes instanceof ThreadBufferWriter).toBe(writerThread);
  });

  it('leaves WAL checkpoints to the writer thread when there is one: the API connection checkpoints only past ten times the usual WAL', async () => {
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(server.ctx.db);
    expect(rows[0]?.wal_autocheckpoint).toBe(writerThread ? API_THREAD_CHECKPOINT_PAGES : 1000);
  });

  it('stores each with its exposure, answers repeats with the stored row, and units asked together share one row each', async () => {
    const experiment = await runningExperiment(server, key, environmentId, { key: `first-${writerThread}` });
    const asks = ['a', 'b', 'a', 'c', 'b'].map((unit_id) => server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id } }));
    const answers = await Promise.all(asks);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers[2]?.body.assignment_id).toBe(answers[0]?.body.assignment_id);
    expect(answers[4]?.body.assignment_id).toBe(answers[1]?.body.assignment_id);
    const rows = await server.ctx.db
      .selectFrom('assignments')
      .select(['id', 'unit_id'])
      .where('experiment_id', '=', experiment.id)
      .orderBy('unit_id')
      .execute();
    expect(rows.map((row) => row.unit_id)).toEqual(['a', 'b', 'c']);
    const exposures = await server.ctx.db.selectFrom('exposures').select('unit_id').where('experiment_id', '=', experiment.id).orderBy('unit_id').execute();
    expect(exposures.map((row) => row.unit_id)).toEqual(['a', 'b', 'c']);
  });

  it('answers a unit assigned elsewhere (another process, an import) with the stored row, not a second one', async () => {
    const experiment = await runningExperiment(server, key, environmentId, { key: `elsewhere-${writerThread}` });
    const first = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'seen' } });
    // What another process would have stored: a row this process's cache has never seen.
    await server.ctx.db
      .insertInto('assignments')
      .values({
        ...(await server.ctx.db.selectFrom('assignments').selectAll().where('id', '=', first.body.assignment_id).executeTakeFirstOrThrow()),
        id: 'other-row',
        unit_id: 'stored-elsewhere',
      })
      .execute();
    const answer = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'stored-elsewhere' } });
    expect(answer.body.assignment_id).toBe('other-row');
  });

  it.runIf(writerThread)('answers a first assignment while the API thread holds its own connection', async () => {
    const experiment = await runningExperiment(server, key, environmentId, { key: 'held-connection' });
    // The key and the experiment's definition are read (and cached) first: reading them would need the connection.
    expect((await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'before' } })).status).toBe(200);
    // Kysely hands the API thread's one SQLite connection to one caller at a time: a first
    // assignment written there would wait for this callback to end, and the callback waits for it.
    const answered = await server.ctx.db.connection().execute(async () => {
      const answer = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'while-held' } });
      return answer.status;
    });
    expect(answered).toBe(200);
  });

  it('answers a stored unit the cache does not hold while the API thread holds its own connection', async () => {
    const experiment = await runningExperiment(server, key, environmentId, { key: `held-returning-${writerThread}` });
    const first = await server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'cached' } });
    // A unit stored by another process (or dropped from this one's cache): only the database knows it.
    const row = await server.ctx.db.selectFrom('assignments').selectAll().where('id', '=', first.body.assignment_id).executeTakeFirstOrThrow();
    await server.ctx.db
      .insertInto('assignments')
      .values({ ...row, id: 'returning-row', unit_id: 'returning' })
      .execute();
    // The miss reads the stored row on the side connection (db/side-reads.ts), not on the one held here.
    const answer = await server.ctx.db
      .connection()
      .execute(() => server.request('POST', '/v1/assign', { key, body: { experiment_key: experiment.key, unit_id: 'returning' } }));
    expect(answer.status).toBe(200);
    expect(answer.body.assignment_id).toBe('returning-row');
    expect(answer.body.variant).toBe(row.variant_key);
  });
});

describe('a first assignment whose writer thread stopped', () => {
  it('is an unavailable database for the API (503 with Retry-After), like an event', () => {
    expect(sqliteSeam.isUnavailable(new BufferUnavailableError('the event buffer writer thread stopped'))).toBe(true);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { INVOICE_BODY, INVOICE_DATA, waitForRender } from '../templates/support.js';
import { eventually, freePort, stopProcess } from '../support/processes.js';

interface Spawned {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `verdict <args>` on the test server's database, its output collected. */
function spawnVerdict(server: TestServer, args: string[], env: Record<string, string> = {}): Spawned {
  const { config, dataDir } = server.database;
  const databaseUrl = config.kind === 'postgres' ? config.url : `sqlite:${config.file}`;
  const child = spawn(process.execPath, ['bin/verdict.js', ...args], {
    env: { ...process.env, VERDICT_DATABASE_URL: databaseUrl, VERDICT_DATA_DIR: dataDir, VERDICT_LOG_LEVEL: 'info', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Queues `count` renders of a long invoice: each PDF takes the worker a noticeable time. */
async function queueSlowRenders(server: TestServer, key: string, count: number, itemCount: number): Promise<string[]> {
  const template = (await server.request('POST', '/v1/templates', { key, body: { name: 'Long invoice', body: INVOICE_BODY } })).body;
  await server.request('POST', `/v1/templates/${template.id}/versions`, { key });
  const items = Array.from({ length: itemCount }, (_, i) => ({ description: `Line ${i} of a long invoice`, quantity: i + 1, unit_price: 2.5 }));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await server.request('POST', '/v1/renders', {
      key,
      body: { template_id: template.id, formats: ['pdf'], data: { ...INVOICE_DATA, items } },
    });
    expect(response.status).toBe(202);
    ids.push(response.body.id);
  }
  return ids;
}

async function jobStatuses(server: TestServer): Promise<Record<string, number>> {
  const rows = await server.ctx.db.selectFrom('jobs').select('status').where('name', '=', 'templates.render').execute();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
  return counts;
}

/**
 * Another connection holding the jobs table in a transaction, as a busy database would: a claim
 * started meanwhile waits for it. Statements given to `hold` run inside that transaction.
 */
async function holdJobsTable(server: TestServer, statement: string): Promise<{ commit(): Promise<void> }> {
  const { config } = server.database;
  if (config.kind === 'sqlite') {
    const connection = new BetterSqlite3(config.file);
    connection.exec('begin immediate');
    connection.exec(statement);
    return {
      async commit() {
        connection.exec('commit');
        connection.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  await client.query('begin');
  await client.query('lock table jobs in exclusive mode');
  await client.query(statement);
  return {
    async commit() {
      await client.query('commit');
      await client.end();
    },
  };
}

describeEachDialect('background work and the process lifecycle', (server) => {
  let key: string;
  const started: Spawned[] = [];
  beforeAll(async () => {
    ({ key } = await server().bootstrap('Lifecycle'));
  });
  afterAll(async () => {
    await Promise.all(started.map((spawned) => stopProcess(spawned.child, 'SIGKILL')));
  });
  const launch = (args: string[], env?: Record<string, string>): Spawned => {
    const spawned = spawnVerdict(server(), args, env);
    started.push(spawned);
    return spawned;
  };

  it('serve answers as soon as it listens, while the jobs queued before it start still run', async () => {
    const renders = await queueSlowRenders(server(), key, 11, 2_000);
    const port = await freePort();
    const serve = launch(['serve', '--port', String(port)]);
    await eventually(async () => (await fetch(`http://127.0.0.1:${port}/v1/healthz`).catch(() => null))?.ok, 60_000);
    // Jobs start only once it listens, one per turn of its event loop: it answers while most wait.
    const atFirstAnswer = await jobStatuses(server());
    expect(atFirstAnswer.succeeded ?? 0).toBeLessThan(renders.length / 2);
    for (const id of renders) expect(await waitForRender(server(), key, id, 60_000)).toMatchObject({ status: 'resolved' });
    await stopProcess(serve.child);
    expect(await serve.exited).toBe(0);
  }, 120_000);

  it('a worker stopped with SIGTERM exits 0 and leaves no job running: a claim under way is put back', async () => {
    const worker = launch(['worker'], { VERDICT_JOB_POLL_MS: '100' });
    await eventually(async () => worker.output().includes('worker started'), 60_000);
    // The renders are queued while the worker runs, but become due only in the transaction that
    // holds the jobs table: the worker's next claim is waiting for it when SIGTERM arrives.
    const renders = await queueSlowRenders(server(), key, 3, 50);
    await server()
      .ctx.db.updateTable('jobs')
      .set({ run_at: Date.now() + 3_600_000 })
      .where('status', '=', 'queued')
      .execute();
    const held = await holdJobsTable(server(), `update jobs set run_at = ${Date.now()} where status = 'queued'`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    worker.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await held.commit();
    expect(await worker.exited).toBe(0);
    expect(worker.output()).not.toMatch(/destroyed/);
    expect(await jobStatuses(server())).not.toHaveProperty('running');

    // Nothing was lost: the next worker renders them all.
    const next = launch(['worker'], { VERDICT_JOB_POLL_MS: '100' });
    // Started before it is stopped: on a loaded machine the first worker may have finished the
    // renders in its grace period, and a SIGTERM during start-up would end it before its handler.
    await eventually(async () => next.output().includes('worker started'), 60_000);
    for (const id of renders) expect(await waitForRender(server(), key, id, 60_000)).toMatchObject({ status: 'resolved' });
    await stopProcess(next.child);
    expect(await next.exited).toBe(0);
  }, 120_000);
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { claimJobs, completeJob, enqueueJob, getJob, retryDelayMs } from '../../src/jobs/queue.js';
import { JobRegistry } from '../../src/jobs/registry.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { Worker } from '../../src/jobs/worker.js';
import type { Clock } from '../../src/lib/time.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { describeEach } from '../support/describe-each.js';
import { ManualClock } from '../support/clock.js';

const silent = pino({ level: 'silent' });

async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describeEach('durable job queue', {}, ({ dialect }) => {
  let database: TestDatabase;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    handle = openDatabase(database.config);
    if (dialect === 'sqlite') {
      const { migrateToLatest } = await import('../../src/db/database.js');
      await migrateToLatest(handle.db);
    }
  });
  afterAll(async () => {
    await handle.destroy();
    await database.drop();
  });
  // Every test starts from an empty queue: a claim (which takes any due job) must not meet jobs
  // another test left queued or running.
  beforeEach(async () => {
    await handle.db.deleteFrom('jobs').execute();
  });

  function worker(registry: JobRegistry, clock: Clock, leaseMs = 5_000): Worker {
    return new Worker({ db: handle.db, seam: handle.seam, registry, logger: silent, clock, pollIntervalMs: 20, leaseMs, concurrency: 2 });
  }

  it('enqueues in the caller’s transaction: a rollback leaves no job', async () => {
    const now = Date.now();
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await enqueueJob(trx, { name: 'test.rolled_back' }, now);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const rows = await handle.db.selectFrom('jobs').selectAll().where('name', '=', 'test.rolled_back').execute();
    expect(rows).toHaveLength(0);
  });

  it('keeps one job per job key', async () => {
    const now = Date.now();
    const first = await enqueueJob(handle.db, { name: 'test.keyed', jobKey: 'only-once' }, now);
    const second = await enqueueJob(handle.db, { name: 'test.keyed', jobKey: 'only-once' }, now);
    expect(first).toEqual(expect.any(String));
    expect(second).toBeNull();
  });

  it('runs a job once with its payload and records success', async () => {
    const clock = new ManualClock();
    const seen: unknown[] = [];
    const registry = new JobRegistry().register('test.echo', async (payload) => void seen.push(payload));
    const id = await enqueueJob(handle.db, { name: 'test.echo', payload: { hello: 'world' } }, clock.now());
    const w = worker(registry, clock);
    w.start();
    const done = await waitFor(async () => {
      const job = await getJob(handle.db, id as string);
      return job?.status === 'succeeded' && job;
    });
    await w.stop();
    expect(seen).toEqual([{ hello: 'world' }]);
    expect(done).toMatchObject({ attempts: 1, last_error: null, locked_by: null });
  });

  it('retries with capped exponential backoff, recording attempts and the last error', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const registry = new JobRegistry().register('test.flaky', async () => {
      calls += 1;
      if (calls < 3) throw new Error(`boom ${calls}`);
    });
    const id = (await enqueueJob(handle.db, { name: 'test.flaky' }, clock.now())) as string;
    const w = worker(registry, clock);
    w.start();
    const retried = await waitFor(async () => {
      const job = await getJob(handle.db, id);
      return job?.status === 'queued' && job.attempts === 1 && job;
    });
    expect(retried.last_error).toBe('Error: boom 1');
    expect(retried.run_at).toBeGreaterThanOrEqual(clock.now() + 1_000);
    clock.advance(3_000);
    await waitFor(async () => (await getJob(handle.db, id))?.attempts === 2);
    const second = await waitFor(async () => {
      const job = await getJob(handle.db, id);
      return job?.status === 'queued' && job.attempts === 2 && job;
    });
    expect(second.last_error).toBe('Error: boom 2');
    clock.advance(10_000);
    const done = await waitFor(async () => {
      const job = await getJob(handle.db, id);
      return job?.status === 'succeeded' && job;
    });
    await w.stop();
    expect(done.attempts).toBe(3);
    expect(calls).toBe(3);
    expect(retryDelayMs(1, () => 0)).toBe(1_000);
    expect(retryDelayMs(4, () => 0)).toBe(8_000);
    expect(retryDelayMs(40, () => 0)).toBe(60 * 60 * 1_000);
  });

  it('fails a job for good when its attempts are used up', async () => {
    const clock = new ManualClock();
    const registry = new JobRegistry().register('test.doomed', async () => {
      throw new Error('always');
    });
    const id = (await enqueueJob(handle.db, { name: 'test.doomed', maxAttempts: 1 }, clock.now())) as string;
    const w = worker(registry, clock);
    w.start();
    const failed = await waitFor(async () => {
      const job = await getJob(handle.db, id);
      return job?.status === 'failed' && job;
    });
    await w.stop();
    expect(failed).toMatchObject({ attempts: 1, last_error: 'Error: always', finished_at: clock.now() });
  });

  it('runs the job type’s failure hook in the transaction that fails the job, however it fails', async () => {
    const clock = new ManualClock();
    const failures: { job: string; payload: unknown; reason: string }[] = [];
    const registry = new JobRegistry().register(
      'test.hooked',
      async (payload) => {
        if ((payload as { hook: string }).hook === 'broken') throw new Error('broken input');
        throw new Error('still failing');
      },
      {
        onFailed: async (trx, { job, payload, reason }) => {
          // A write in the given transaction: it exists exactly when the job failed.
          await enqueueJob(trx, { name: 'test.after_failure', payload: { failed: job.id } }, clock.now());
          if ((payload as { hook: string }).hook === 'broken') throw new Error('the hook failed');
          failures.push({ job: job.id, payload, reason });
        },
      },
    );
    const thrown = (await enqueueJob(handle.db, { name: 'test.hooked', payload: { hook: 'ok' }, maxAttempts: 1 }, clock.now())) as string;
    const lost = (await enqueueJob(handle.db, { name: 'test.hooked', payload: { hook: 'ok' }, maxAttempts: 2 }, clock.now() + 1)) as string;
    const broken = (await enqueueJob(handle.db, { name: 'test.hooked', payload: { hook: 'broken' }, maxAttempts: 1 }, clock.now() + 2)) as string;
    // `lost` as its last worker left it: every attempt taken, the lease lapsed.
    await handle.db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 2, locked_by: 'lost-worker', locked_until: clock.now() })
      .where('id', '=', lost)
      .execute();
    clock.advance(10_000);
    const w = worker(registry, clock);
    w.start();
    await waitFor(async () => failures.length === 2);
    const brokenJob = await waitFor(async () => {
      const job = await getJob(handle.db, broken);
      return job?.attempts === 1 && job.status === 'running' && job;
    });
    await w.stop();
    expect(failures.sort((a, b) => a.job.localeCompare(b.job))).toEqual(
      [
        { job: thrown, payload: { hook: 'ok' }, reason: 'Error: still failing' },
        { job: lost, payload: { hook: 'ok' }, reason: 'its 2 attempts are used up: the worker running the last one was lost' },
      ].sort((a, b) => a.job.localeCompare(b.job)),
    );
    expect(await getJob(handle.db, thrown)).toMatchObject({ status: 'failed', last_error: 'Error: still failing' });
    expect(await getJob(handle.db, lost)).toMatchObject({ status: 'failed', attempts: 3 });
    // The hook threw: the job's failure rolled back with the hook's write; the job is retried once its lease lapses.
    expect(brokenJob.locked_by).toBe(w.id);
    const followUps = await handle.db.selectFrom('jobs').select('payload').where('name', '=', 'test.after_failure').execute();
    expect(followUps.map((row) => JSON.parse(row.payload)).sort((a, b) => a.failed.localeCompare(b.failed))).toEqual(
      [{ failed: thrown }, { failed: lost }].sort((a, b) => a.failed.localeCompare(b.failed)),
    );
  });

  it('stops claiming on shutdown and puts back what a claim under way took, without running it', async () => {
    let runs = 0;
    const registry = new JobRegistry().register('test.shutdown', async () => void (runs += 1));
    const w = worker(registry, { now: () => Date.now() });
    w.start();
    // Another transaction holds the jobs table (a busy database) while the job is enqueued in it,
    // so the worker's next claim is under way, waiting, when the shutdown begins.
    const locker = dialect === 'postgres' ? openDatabase(database.config) : handle;
    let release = () => undefined as void;
    let holding = () => undefined as void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    let jobId = '';
    const locked = locker.db.transaction().execute(async (trx) => {
      if (dialect === 'postgres') await sql`lock table jobs in exclusive mode`.execute(trx);
      jobId = (await enqueueJob(trx, { name: 'test.shutdown' }, Date.now() - 1)) as string;
      const released = new Promise<void>((resolve) => (release = resolve));
      holding();
      await released;
    });
    let stillStopping = true;
    try {
      // Once the table is held (on a loaded machine taking the lock can outlast any fixed wait).
      await held;
      await new Promise((resolve) => setTimeout(resolve, 200));
      const stopping = w.stop().then(() => (stillStopping = false));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stillStopping).toBe(true);
      release();
      await stopping;
    } finally {
      release();
      await locked;
      if (locker !== handle) await locker.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runs).toBe(0);
    expect(await getJob(handle.db, jobId)).toMatchObject({ status: 'queued', attempts: 0, locked_by: null, locked_until: null });
  });

  it('gives running jobs a grace period on shutdown, then releases those that did not finish', async () => {
    const started = new Set<string>();
    const registry = new JobRegistry()
      .register('test.quick', async () => {
        started.add('quick');
        await new Promise((resolve) => setTimeout(resolve, 100));
      })
      .register('test.stuck', async (_payload, { signal }) => {
        started.add('stuck');
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new Error('interrupted');
      });
    const now = Date.now();
    const quick = (await enqueueJob(handle.db, { name: 'test.quick', runAt: now - 60_000 }, now)) as string;
    const stuck = (await enqueueJob(handle.db, { name: 'test.stuck', runAt: now - 60_000 }, now)) as string;
    const w = worker(registry, { now: () => Date.now() });
    w.start();
    // Both handlers under way (a claimed job starts on a later turn of the event loop).
    await waitFor(async () => started.size === 2);
    const stopping = Date.now();
    await w.stop(400);
    expect(Date.now() - stopping).toBeGreaterThanOrEqual(390);
    expect(await getJob(handle.db, quick)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(await getJob(handle.db, stuck)).toMatchObject({ status: 'queued', attempts: 0, locked_by: null, last_error: null });
  });

  it('never hands one job to two concurrent claimers', async () => {
    const now = Date.now();
    for (let i = 0; i < 120; i++) await enqueueJob(handle.db, { name: 'test.claim', runAt: now - 1 }, now);
    // On PostgreSQL separate pools act as separate processes racing on their own connections.
    // better-sqlite3 is synchronous, so two handles in one process would block each other;
    // there the claimers share the process's one connection, as the server's workers do.
    const claimers = Array.from({ length: 4 }, () => (dialect === 'postgres' ? openDatabase(database.config) : { ...handle, destroy: async () => undefined }));
    const claimed: string[] = [];
    await Promise.all(
      claimers.map(async (claimer, index) => {
        for (;;) {
          const jobs = await claimJobs(claimer.db, claimer.seam, `claimer-${index}`, 7, 60_000, now);
          const mine = jobs.filter((job) => job.name === 'test.claim');
          claimed.push(...mine.map((job) => job.id));
          if (jobs.length === 0) break;
        }
      }),
    );
    await Promise.all(claimers.map((claimer) => claimer.destroy()));
    expect(claimed).toHaveLength(120);
    expect(new Set(claimed).size).toBe(120);
  });

  it('gives a job whose lease lapsed to another worker, and the old one cannot complete it', async () => {
    const start = Date.now();
    const id = (await enqueueJob(handle.db, { name: 'test.lease' }, start)) as string;
    const [first] = await claimJobs(handle.db, handle.seam, 'worker-a', 10, 1_000, start);
    expect(first?.id).toBe(id);
    expect(await claimJobs(handle.db, handle.seam, 'worker-b', 10, 1_000, start + 500)).toHaveLength(0);
    const [again] = await claimJobs(handle.db, handle.seam, 'worker-b', 10, 1_000, start + 1_500);
    expect(again).toMatchObject({ id, attempts: 2, locked_by: 'worker-b' });
    expect(await completeJob(handle.db, id, 'worker-a', start + 1_600)).toBe(false);
    expect(await completeJob(handle.db, id, 'worker-b', start + 1_600)).toBe(true);
  });

  it('retries a job whose worker process was killed mid-job, and completes it once', async () => {
    const id = (await enqueueJob(handle.db, { name: 'test.block' }, Date.now())) as string;
    const marker = path.join(database.dataDir, `marker-${id}.json`);
    const databaseUrl = database.config.kind === 'postgres' ? database.config.url : `sqlite:${database.config.file}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/blocking-worker.ts'], {
      env: { ...process.env, VERDICT_DATABASE_URL: databaseUrl, VERDICT_TEST_MARKER: marker, VERDICT_JOB_LEASE_MS: '1000', VERDICT_JOB_POLL_MS: '50' },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const started = await waitFor(async () => fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, 'utf8')), 30_000);
    expect(started).toMatchObject({ job: id, attempt: 1, pid: child.pid });
    child.kill('SIGKILL');
    await exited;

    let runs = 0;
    const registry = new JobRegistry().register('test.block', async () => void (runs += 1));
    const survivor = worker(registry, { now: () => Date.now() }, 1_000);
    survivor.start();
    const done = await waitFor(async () => {
      const job = await getJob(handle.db, id);
      return job?.status === 'succeeded' && job;
    }, 15_000);
    await survivor.stop();
    expect(runs).toBe(1);
    expect(done.attempts).toBe(2);
    expect(done.locked_by).toBeNull();
  });

  it('schedules a recurring job once per period however many schedulers run', async () => {
    const clock = new ManualClock(Date.UTC(2030, 0, 1));
    const registry = new JobRegistry().every('test.recurring', 60_000);
    const schedulers = [1, 2, 3].map(() => new Scheduler(handle.db, registry, clock, silent));
    await Promise.all(schedulers.map((s) => s.tick()));
    clock.advance(30_000);
    await Promise.all(schedulers.map((s) => s.tick()));
    clock.advance(30_000);
    await Promise.all(schedulers.map((s) => s.tick()));
    const rows = await handle.db.selectFrom('jobs').select('job_key').where('name', '=', 'test.recurring').execute();
    expect(rows.map((r) => r.job_key).sort()).toEqual([
      `test.recurring@${Math.floor(Date.UTC(2030, 0, 1) / 60_000)}`,
      `test.recurring@${Math.floor(Date.UTC(2030, 0, 1) / 60_000) + 1}`,
    ]);
  });
});

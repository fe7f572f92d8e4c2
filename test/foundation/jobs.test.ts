import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { claimJobs, completeJob, enqueueJob, getJob, retryDelayMs } from '../../src/jobs/queue.js';
import { JobRegistry } from '../../src/jobs/registry.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { Worker } from '../../src/jobs/worker.js';
import type { Clock } from '../../src/lib/time.js';
import { createTestDatabase, testDialects, type TestDatabase } from '../support/databases.js';
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

for (const dialect of testDialects()) {
  describe(`durable job queue [${dialect}]`, () => {
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
}

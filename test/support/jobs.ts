import pino, { type Logger } from 'pino';
import { Worker } from '../../src/jobs/worker.js';
import type { TestServer } from './server.js';

export interface TestWorkerOptions {
  /** The general lane's slots; the delivery pool is the test server's configuration (`jobs.outbound`). */
  concurrency?: number;
  pollIntervalMs?: number;
  leaseMs?: number;
  /** Wake the worker on every enqueue of the test server's process, as `verdict serve` does. */
  wakeOnEnqueue?: boolean;
  logger?: Logger;
}

/** The job worker a `verdict serve` runs, on the test server's database, job registry and clock (the test server runs none). */
export function startTestWorker(server: TestServer, options: TestWorkerOptions = {}): Worker {
  const { ctx } = server;
  const worker = new Worker({
    db: ctx.db,
    seam: ctx.seam,
    registry: ctx.jobs,
    logger: options.logger ?? pino({ level: 'silent' }),
    clock: ctx.clock,
    pollIntervalMs: options.pollIntervalMs ?? 20,
    leaseMs: options.leaseMs ?? 10_000,
    concurrency: options.concurrency ?? 2,
    outbound: ctx.config.jobs.outbound,
  });
  if (options.wakeOnEnqueue) ctx.onJobEnqueued = () => worker.wake();
  worker.start();
  return worker;
}

/**
 * Runs the queued jobs (those of `name`, or every one) on a worker until none is queued or running,
 * then stops it. With a `name`, a job of that name that failed for good fails the caller.
 */
export async function runQueuedJobs(server: TestServer, options: { name?: string; concurrency?: number; timeoutMs?: number } = {}): Promise<void> {
  const worker = startTestWorker(server, { pollIntervalMs: 10, concurrency: options.concurrency ?? 1 });
  try {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    for (;;) {
      let query = server.ctx.db.selectFrom('jobs').select(['status', 'last_error']).where('status', 'in', ['queued', 'running', 'failed']);
      if (options.name) query = query.where('name', '=', options.name);
      const unfinished = await query.execute();
      const failed = options.name ? unfinished.find((job) => job.status === 'failed') : undefined;
      if (failed) throw new Error(`a ${options.name} job failed: ${failed.last_error}`);
      if (unfinished.every((job) => job.status === 'failed')) return;
      if (Date.now() > deadline) throw new Error(`the queued jobs${options.name ? ` (${options.name})` : ''} did not finish`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await worker.stop();
  }
}

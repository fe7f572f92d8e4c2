import os from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import { newId } from '../lib/ids.js';
import type { Clock } from '../lib/time.js';
import { claimJobs, completeJob, failJob, renewLease, type JobRow } from './queue.js';
import type { JobRegistry } from './registry.js';

export interface WorkerOptions {
  db: Db;
  seam: DialectSeam;
  registry: JobRegistry;
  logger: Logger;
  clock: Clock;
  pollIntervalMs: number;
  leaseMs: number;
  concurrency: number;
}

/**
 * Polls the jobs table, runs each claimed job with a lease it keeps renewing, and records the
 * outcome. A worker that dies stops renewing; its jobs become claimable when the lease lapses.
 */
export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${newId()}`;
  readonly #options: WorkerOptions;
  readonly #running = new Map<string, Promise<void>>();
  readonly #shutdown = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #stopped = true;

  constructor(options: WorkerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  /** Polls now instead of at the next interval (called after enqueueing on this process). */
  wake(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#poll(), 0);
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const drained = Promise.allSettled(this.#running.values());
    const timeout = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([drained, timeout]);
    this.#shutdown.abort();
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#stopped) return;
    this.#polling = true;
    let claimedAny = false;
    try {
      const free = this.#options.concurrency - this.#running.size;
      if (free > 0) {
        const { db, seam, leaseMs, clock } = this.#options;
        const jobs = await claimJobs(db, seam, this.id, free, leaseMs, clock.now());
        claimedAny = jobs.length > 0;
        for (const job of jobs) this.#track(job);
      }
    } catch (error) {
      this.#options.logger.error({ err: error }, 'claiming jobs failed; will retry');
    } finally {
      this.#polling = false;
      if (!this.#stopped) {
        this.#timer = setTimeout(() => void this.#poll(), claimedAny ? 0 : this.#options.pollIntervalMs);
      }
    }
  }

  #track(job: JobRow): void {
    const run = this.#run(job)
      // Recording the outcome failed (the database went away): the lease is no longer renewed,
      // so the job runs again once it lapses. Left unhandled, the rejection would end the process.
      .catch((error: unknown) => this.#options.logger.error({ err: error, job_id: job.id, job: job.name }, 'recording a job outcome failed; it runs again when its lease lapses'))
      .finally(() => {
        this.#running.delete(job.id);
        this.wake();
      });
    this.#running.set(job.id, run);
  }

  async #run(job: JobRow): Promise<void> {
    const { db, registry, clock, leaseMs } = this.#options;
    const logger = this.#options.logger.child({ job_id: job.id, job: job.name, attempt: job.attempts });
    const handler = registry.handler(job.name);
    if (!handler || job.attempts > job.max_attempts) {
      const reason = handler ? 'attempts exhausted (its worker was lost)' : `no handler is registered for "${job.name}"`;
      await failJob(db, { ...job, attempts: job.max_attempts }, this.id, reason, clock.now());
      logger.error({ reason }, 'job failed');
      return;
    }
    const lease = new AbortController();
    const onShutdown = () => lease.abort();
    this.#shutdown.signal.addEventListener('abort', onShutdown);
    const heartbeat = setInterval(() => {
      renewLease(db, job.id, this.id, leaseMs, clock.now())
        .then((held) => held || lease.abort())
        .catch((error: unknown) => logger.warn({ err: error }, 'renewing the job lease failed'));
    }, Math.max(Math.floor(leaseMs / 3), 50));
    try {
      await handler(JSON.parse(job.payload), { job, logger, signal: lease.signal });
      if (await completeJob(db, job.id, this.id, clock.now())) logger.info('job succeeded');
    } catch (error) {
      const outcome = await failJob(db, job, this.id, describe(error), clock.now());
      logger.warn({ err: error, outcome }, 'job attempt failed');
    } finally {
      clearInterval(heartbeat);
      this.#shutdown.signal.removeEventListener('abort', onShutdown);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

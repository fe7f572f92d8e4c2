import os from 'node:os';
import type { Logger } from 'pino';
import { DEFAULT_OUTBOUND_POOL, type OutboundPool } from '../config.js';
import type { Db } from '../db/database.js';
import type { DialectSeam } from '../db/dialect.js';
import type { JobLane } from '../db/schema.js';
import { newId } from '../lib/ids.js';
import type { Clock } from '../lib/time.js';
import { claimOutboundJobs } from './fair-claim.js';
import { claimJobs, completeJob, failJob, releaseJobs, renewLease, type JobRow } from './queue.js';
import type { JobDefinition, JobRegistry } from './registry.js';

export interface WorkerOptions {
  db: Db;
  seam: DialectSeam;
  registry: JobRegistry;
  logger: Logger;
  clock: Clock;
  pollIntervalMs: number;
  leaseMs: number;
  /** Jobs of the general lane (renders, task-tool mirroring, the analysis, maintenance) run at once. */
  concurrency: number;
  /** The outbound lane's pool (webhook deliveries) and its share per workspace; the configuration's defaults when absent. */
  outbound?: OutboundPool;
}

/** How long handlers aborted at the end of the shutdown grace get to return before their jobs are released. */
const ABORT_SETTLE_MS = 1_000;

interface RunningJob {
  done: Promise<void>;
  lease: AbortController;
}

/** One pool of the worker: its size, the jobs of it running here, and how it claims. */
interface Lane {
  name: JobLane;
  size: number;
  running: number;
  claim(free: number): Promise<JobRow[]>;
}

/**
 * Polls the jobs table, runs each claimed job with a lease it keeps renewing, and records the
 * outcome. Jobs run in two pools: the general lane's, and the outbound lane's (deliveries, which
 * wait on other people's servers), so a slow delivery never holds a render's slot; the outbound
 * claim shares its pool fairly between workspaces (fair-claim.ts). A worker that dies stops
 * renewing; its jobs become claimable when the lease lapses. A worker that stops claims nothing
 * more, lets running jobs finish for a grace period and puts back in the queue whatever it
 * claimed but did not finish, so no job waits for a lease to lapse.
 */
export class Worker {
  readonly id = `${os.hostname()}:${process.pid}:${newId()}`;
  readonly #options: WorkerOptions;
  readonly #running = new Map<string, RunningJob>();
  readonly #lanes: Lane[];
  #timer: NodeJS.Timeout | undefined;
  #poll: Promise<void> | undefined;
  #stopped = true;
  #turns: Promise<void> = Promise.resolve();

  constructor(options: WorkerOptions) {
    this.#options = options;
    const { db, seam, leaseMs, clock } = options;
    const outbound = options.outbound ?? DEFAULT_OUTBOUND_POOL;
    this.#lanes = [
      { name: 'general', size: options.concurrency, running: 0, claim: (free) => claimJobs(db, seam, this.id, free, leaseMs, clock.now()) },
      {
        name: 'outbound',
        size: outbound.concurrency,
        running: 0,
        claim: (free) => claimOutboundJobs(db, seam, { workerId: this.id, limit: free, perWorkspace: outbound.perWorkspace, leaseMs, now: clock.now() }),
      },
    ];
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  /** Polls now instead of at the next interval (called after enqueueing on this process). */
  wake(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#startPoll(), 0);
  }

  /**
   * Stops claiming, waits for a claim already under way (what it claimed is released, not run),
   * gives running jobs `graceMs` to finish, aborts the rest and releases them. Once it resolves
   * this worker makes no more queries, so the database can be closed.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#poll;
    if (await this.#settle(graceMs)) return;
    const interrupted = [...this.#running.keys()];
    for (const job of this.#running.values()) job.lease.abort();
    await this.#settle(ABORT_SETTLE_MS);
    await this.#release(interrupted);
  }

  /** Resolves true when every running job finished within `ms`. */
  async #settle(ms: number): Promise<boolean> {
    if (this.#running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const drained = Promise.all([...this.#running.values()].map((job) => job.done)).then(() => true);
    try {
      return await Promise.race([drained, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #release(jobIds: string[]): Promise<void> {
    if (jobIds.length === 0) return;
    try {
      const released = await releaseJobs(this.#options.db, jobIds, this.id, this.#options.clock.now());
      this.#options.logger.info({ released }, 'released unfinished jobs back to the queue');
    } catch (error) {
      this.#options.logger.error({ err: error, jobs: jobIds }, 'releasing jobs failed; they run again when their lease lapses');
    }
  }

  #startPoll(): void {
    if (this.#poll || this.#stopped) return;
    this.#poll = this.#claim().then((claimedAny) => {
      this.#poll = undefined;
      if (!this.#stopped) this.#timer = setTimeout(() => this.#startPoll(), claimedAny ? 0 : this.#options.pollIntervalMs);
    });
  }

  /** One claim per lane with free slots; true when it claimed jobs (so there may be more). Never rejects. */
  async #claim(): Promise<boolean> {
    let claimedAny = false;
    for (const lane of this.#lanes) {
      if (this.#stopped) break;
      if (await this.#claimFor(lane)) claimedAny = true;
    }
    return claimedAny;
  }

  async #claimFor(lane: Lane): Promise<boolean> {
    const free = lane.size - lane.running;
    if (free <= 0) return false;
    try {
      const jobs = await lane.claim(free);
      if (this.#stopped) {
        await this.#release(jobs.map((job) => job.id));
        return false;
      }
      for (const job of jobs) this.#track(job, lane);
      return jobs.length > 0;
    } catch (error) {
      this.#options.logger.error({ err: error, lane: lane.name }, 'claiming jobs failed; will retry');
      return false;
    }
  }

  #track(job: JobRow, lane: Lane): void {
    const lease = new AbortController();
    lane.running += 1;
    const done = this.#run(job, lease).finally(() => {
      lane.running -= 1;
      this.#running.delete(job.id);
      this.wake();
    });
    this.#running.set(job.id, { done, lease });
  }

  /** Runs one job and records its outcome. Never rejects: a failure to record is logged, and the lease covers it. */
  async #run(job: JobRow, lease: AbortController): Promise<void> {
    const { db, registry, clock } = this.#options;
    const logger = this.#options.logger.child({ job_id: job.id, job: job.name, attempt: job.attempts });
    const definition = registry.definition(job.name);
    try {
      if (!definition || job.attempts > job.max_attempts) {
        await this.#failUnrunnable(job, definition, logger);
        return;
      }
      await this.#nextTurn();
      if (this.#stopped) {
        await this.#release([job.id]);
        return;
      }
      const stopHeartbeat = this.#heartbeat(job, lease, logger);
      try {
        await definition.handler(JSON.parse(job.payload), { job, logger, signal: lease.signal });
        if (await completeJob(db, job.id, this.id, clock.now())) logger.info('job succeeded');
      } catch (error) {
        // Interrupted by shutdown: the job did not fail; stop() puts it back in the queue.
        if (this.#stopped && lease.signal.aborted) return;
        const outcome = await failJob(db, job, this.id, describe(error), clock.now(), definition.onFailed);
        logger.warn({ err: error, outcome }, 'job attempt failed');
      } finally {
        stopHeartbeat();
      }
    } catch (error) {
      logger.error({ err: error }, 'recording the job outcome failed; it runs again when its lease lapses');
    }
  }

  /**
   * Resolves on a later turn of the event loop than the previous job's start, so the HTTP server
   * of a serving process answers between jobs. With SQLite every query completes synchronously,
   * so claimed jobs started together would otherwise run back to back without one I/O turn.
   */
  #nextTurn(): Promise<void> {
    const turn = this.#turns.then(() => new Promise<void>((resolve) => setImmediate(resolve)));
    this.#turns = turn;
    return turn;
  }

  /** A job nobody can run: no handler here, or its attempts were used up by workers that were lost. */
  async #failUnrunnable(job: JobRow, definition: JobDefinition | undefined, logger: Logger): Promise<void> {
    const reason = definition
      ? `its ${job.max_attempts} attempts are used up: the worker running the last one was lost` +
        (job.last_error ? ` (an earlier attempt failed with: ${job.last_error})` : '')
      : `no handler is registered for "${job.name}"`;
    await failJob(this.#options.db, { ...job, attempts: job.max_attempts }, this.id, reason, this.#options.clock.now(), definition?.onFailed);
    logger.error({ reason }, 'job failed');
  }

  /** Renews the lease while the handler runs; aborts the handler's signal when the lease is lost. */
  #heartbeat(job: JobRow, lease: AbortController, logger: Logger): () => void {
    const { db, clock, leaseMs } = this.#options;
    const timer = setInterval(
      () => {
        renewLease(db, job.id, this.id, leaseMs, clock.now())
          .then((held) => held || lease.abort())
          .catch((error: unknown) => logger.warn({ err: error }, 'renewing the job lease failed'));
      },
      Math.max(Math.floor(leaseMs / 3), 50),
    );
    const stop = () => clearInterval(timer);
    lease.signal.addEventListener('abort', stop, { once: true });
    return stop;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

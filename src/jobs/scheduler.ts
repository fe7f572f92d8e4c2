import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { Clock } from '../lib/time.js';
import { enqueueJob } from './queue.js';
import type { JobRegistry } from './registry.js';

/**
 * Turns each recurring definition into one job per period. The job key names the period, and
 * job keys are unique, so however many processes run the scheduler a period runs once.
 */
export class Scheduler {
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly registry: JobRegistry,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly tickMs = 5_000,
  ) {}

  start(): void {
    this.#startTick();
    this.#timer = setInterval(() => this.#startTick(), this.tickMs);
    this.#timer.unref();
  }

  /** Stops scheduling; resolves once a tick under way has finished, so the database can be closed. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#ticking;
  }

  #startTick(): void {
    if (this.#ticking) return;
    this.#ticking = this.tick().finally(() => (this.#ticking = undefined));
  }

  async tick(): Promise<void> {
    const now = this.clock.now();
    for (const recurring of this.registry.recurring) {
      const period = Math.floor(now / recurring.everyMs);
      try {
        await enqueueJob(this.db, { name: recurring.name, payload: recurring.payload, jobKey: `${recurring.name}@${period}`, maxAttempts: 3 }, now);
      } catch (error) {
        this.logger.error({ err: error, job: recurring.name }, 'scheduling a recurring job failed');
      }
    }
  }
}

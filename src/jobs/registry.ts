import type { Logger } from 'pino';
import type { Executor } from '../db/database.js';
import type { JobRow } from './queue.js';

export interface JobContext {
  job: JobRow;
  logger: Logger;
  /** Aborted when the worker loses the job's lease or shuts down; long handlers should stop. */
  signal: AbortSignal;
}

export type JobHandler = (payload: unknown, context: JobContext) => Promise<void>;

export interface JobFailure {
  job: JobRow;
  /** The job's payload as enqueued (null when it is not valid JSON). */
  payload: unknown;
  /** Why the job failed for good: its last error, or that its attempts were used up. */
  reason: string;
}

/**
 * Runs in the transaction that marks a job failed for good, however it failed (its handler threw
 * on the last attempt, or its workers were lost until no attempt was left), so the record the job
 * was working on fails with it or not at all. It throwing rolls the failure back; the job is then
 * claimed again once its lease lapses and the hook runs again.
 */
export type JobFailureHook = (trx: Executor, failure: JobFailure) => Promise<void>;

export interface JobDefinition {
  handler: JobHandler;
  onFailed?: JobFailureHook | undefined;
}

export interface RecurringJob {
  name: string;
  everyMs: number;
  payload?: unknown;
}

/** What each feature contributes to the background work: handlers by job name, and schedules. */
export class JobRegistry {
  readonly #definitions = new Map<string, JobDefinition>();
  readonly #recurring: RecurringJob[] = [];

  register(name: string, handler: JobHandler, options: { onFailed?: JobFailureHook } = {}): this {
    if (this.#definitions.has(name)) throw new Error(`job handler "${name}" is already registered`);
    this.#definitions.set(name, { handler, onFailed: options.onFailed });
    return this;
  }

  every(name: string, everyMs: number, payload?: unknown): this {
    this.#recurring.push({ name, everyMs, payload });
    return this;
  }

  definition(name: string): JobDefinition | undefined {
    return this.#definitions.get(name);
  }

  get names(): string[] {
    return [...this.#definitions.keys()];
  }

  get recurring(): readonly RecurringJob[] {
    return this.#recurring;
  }
}

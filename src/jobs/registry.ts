import type { Logger } from 'pino';
import type { JobRow } from './queue.js';

export interface JobContext {
  job: JobRow;
  logger: Logger;
  /** Aborted when the worker loses the job's lease or shuts down; long handlers should stop. */
  signal: AbortSignal;
}

export type JobHandler = (payload: unknown, context: JobContext) => Promise<void>;

export interface RecurringJob {
  name: string;
  everyMs: number;
  payload?: unknown;
}

/** What each feature contributes to the background work: handlers by job name, and schedules. */
export class JobRegistry {
  readonly #handlers = new Map<string, JobHandler>();
  readonly #recurring: RecurringJob[] = [];

  register(name: string, handler: JobHandler): this {
    if (this.#handlers.has(name)) throw new Error(`job handler "${name}" is already registered`);
    this.#handlers.set(name, handler);
    return this;
  }

  every(name: string, everyMs: number, payload?: unknown): this {
    this.#recurring.push({ name, everyMs, payload });
    return this;
  }

  handler(name: string): JobHandler | undefined {
    return this.#handlers.get(name);
  }

  get names(): string[] {
    return [...this.#handlers.keys()];
  }

  get recurring(): readonly RecurringJob[] {
    return this.#recurring;
  }
}

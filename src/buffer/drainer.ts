import type { Logger } from 'pino';
import type { EventBuffer, PersistEvents } from './types.js';

export interface DrainerOptions {
  buffer: EventBuffer;
  persist: PersistEvents;
  logger: Logger;
  /** Most events per transaction. */
  batchSize: number;
  /** Pause after a round that emptied the buffer. */
  intervalMs: number;
  /** Told how many events each committed round moved (the drain-rate metric). */
  onDrained?: (events: number) => void;
}

/** Pause after a failed round (store down): long enough not to flood the log, short enough to recover fast. */
const ERROR_PAUSE_MS = 1_000;

/**
 * The loop that moves acknowledged events from the buffer into the events table. It drains
 * back to back while a backlog remains and otherwise looks every `intervalMs`, so events reach
 * the database in batches rather than one transaction per request.
 */
export class Drainer {
  readonly #options: DrainerOptions;
  #running: Promise<void> | null = null;
  #stopped = true;
  #timer: NodeJS.Timeout | undefined;
  #wakeSleeper: (() => void) | null = null;
  #failing = false;

  constructor(options: DrainerOptions) {
    this.#options = options;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#running = this.#loop();
  }

  /** Finishes the round in progress (its events are committed and released), then stops. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#wakeSleeper?.();
    await this.#running;
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      const pauseMs = await this.#round();
      if (this.#stopped) break;
      if (pauseMs === 0) await new Promise((resolve) => setImmediate(resolve));
      else await this.#sleep(pauseMs);
    }
  }

  /** Drains once and returns how long to wait before the next round. */
  async #round(): Promise<number> {
    const { buffer, persist, batchSize, intervalMs, logger } = this.#options;
    try {
      const { drained, more } = await buffer.drain(persist, batchSize);
      if (drained > 0) this.#options.onDrained?.(drained);
      if (this.#failing) logger.info('draining the event buffer works again');
      this.#failing = false;
      return more ? 0 : intervalMs;
    } catch (error) {
      if (!this.#failing) logger.error({ err: error }, 'draining the event buffer failed; events stay buffered and the drainer retries');
      this.#failing = true;
      return Math.max(intervalMs, ERROR_PAUSE_MS);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wakeSleeper = () => {
        clearTimeout(this.#timer);
        resolve();
      };
      this.#timer = setTimeout(resolve, ms);
    });
  }
}

/**
 * How long the embedded buffer's writer thread spends in each kind of work (docs/events.md,
 * "Watching the writer thread"). Everything queued on the thread waits while one piece runs, so
 * the longest piece of a moment bounds the wait of a single event's commit behind it.
 */
export const WRITER_OPERATIONS = ['append', 'drain', 'write', 'purge', 'checkpoint'] as const;
export type WriterOperation = (typeof WRITER_OPERATIONS)[number];

export interface OperationTally {
  count: number;
  totalMs: number;
  longestMs: number;
}

export type WriterStats = Partial<Record<WriterOperation, OperationTally>>;

/** Tallies kept on the thread and handed over (then restarted) about once a second. */
export class WriterTallies {
  #tallies: WriterStats = {};
  #any = false;

  record(operation: WriterOperation, ms: number): void {
    const tally = (this.#tallies[operation] ??= { count: 0, totalMs: 0, longestMs: 0 });
    tally.count += 1;
    tally.totalMs += ms;
    tally.longestMs = Math.max(tally.longestMs, ms);
    this.#any = true;
  }

  /** The tallies since the last call, or null when nothing ran. */
  take(): WriterStats | null {
    if (!this.#any) return null;
    const taken = this.#tallies;
    this.#tallies = {};
    this.#any = false;
    return taken;
  }
}

/** Runs `work` and records its wall time under `operation`, whether it succeeds or throws. */
export async function timed<T>(tallies: WriterTallies, operation: WriterOperation, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    tallies.record(operation, performance.now() - started);
  }
}

/**
 * How long the embedded buffer's writer thread spends in each kind of work (docs/events.md,
 * "Watching the writer thread"). Everything queued on the thread waits while one piece runs, so
 * the longest piece of a moment bounds the wait of a single event's commit behind it.
 */
export const WRITER_OPERATIONS = ['append', 'release', 'drain', 'write', 'purge', 'checkpoint'] as const;
export type WriterOperation = (typeof WRITER_OPERATIONS)[number];

export interface OperationTally {
  count: number;
  totalMs: number;
  longestMs: number;
}

export type WriterStats = Partial<Record<WriterOperation, OperationTally>>;

/** Adds `from` into `into`: counts and times add up, the longest is the longer of the two. */
export function addTally(into: OperationTally, from: OperationTally): void {
  into.count += from.count;
  into.totalMs += from.totalMs;
  into.longestMs = Math.max(into.longestMs, from.longestMs);
}

/** Tallies kept on the thread and handed over (then restarted) about once a second. */
export class WriterTallies {
  #tallies: WriterStats = {};

  record(operation: WriterOperation, ms: number): void {
    addTally((this.#tallies[operation] ??= { count: 0, totalMs: 0, longestMs: 0 }), { count: 1, totalMs: ms, longestMs: ms });
  }

  /** The tallies since the last call, or null when nothing ran. */
  take(): WriterStats | null {
    const taken = this.#tallies;
    if (Object.keys(taken).length === 0) return null;
    this.#tallies = {};
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

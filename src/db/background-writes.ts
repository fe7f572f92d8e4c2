import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The shortest rest after a background piece. Writes on the API's own SQLite connection (the job
 * queue, a snapshot's insert) wait for the write lock on a timer of about a millisecond
 * (PatientConnection in db/sqlite.ts); a next piece sent as soon as the last one returned took the
 * lock back first every time, and in a soak they waited the whole busy limit (10 s) while every
 * request needing that connection queued behind them.
 */
export const MIN_REST_MS = 5;

/**
 * The rest after each piece, as a share of the time it took, while the process serves. The first
 * rollups of three experiments of 340,000 units, built in steps while a load started, kept the
 * main writer thread busy back to back (the three builds' steps queued behind one another) and
 * took a core from the API's thread on a 2-core machine: first assignments and drains queued
 * behind the steps, and for the first 30 s assign p99 was 80-1,400 ms. Resting as long as each
 * step took halves the build's share of the writer thread; in the same soak p99 fell to 30-50 ms
 * from the 20th second, and the build took about twice as long (docs/benchmarks.md "Latency
 * under sustained load").
 */
export const SERVING_REST_RATIO = 1;

/**
 * Long writes that run in the background of serving, in pieces of their own transaction: a
 * SQLite build of an experiment's rollups in steps and a refresh in rounds
 * (features/analysis/rollup-steps.ts, rollup-refresh.ts). The pieces of every experiment take
 * turns, one at a time in the process, each followed by a rest of `restRatio` times what it took
 * (at least MIN_REST_MS), in which first assignments, drains and the API's own writes get the
 * writer thread and the file's lock. A one-shot command (`verdict analyze`) has nothing to yield
 * to and rests only the minimum.
 */
export class BackgroundWrites {
  readonly #restRatio: number;
  #turn: Promise<unknown> = Promise.resolve();

  constructor(restRatio: number) {
    if (!(restRatio >= 0)) throw new Error(`the rest ratio must be 0 or more, got ${restRatio}`);
    this.#restRatio = restRatio;
  }

  /** Runs `piece` when every piece asked for before it has run and rested; settles as it did, after its own rest. */
  run<T>(piece: () => Promise<T>): Promise<T> {
    const result = this.#turn.then(async () => {
      const started = performance.now();
      try {
        return await piece();
      } finally {
        await sleep(Math.max(MIN_REST_MS, (performance.now() - started) * this.#restRatio));
      }
    });
    this.#turn = result.catch(() => undefined);
    return result;
  }
}

/**
 * How long a background piece should hold the writer thread. A first assignment that arrives
 * while a piece runs waits for the rest of it: rounds of 1,000 events took 35 to 70 ms under a
 * soak's load, and first assignments queued behind them had a p99 of 39 to 137 ms. The cost of a
 * row varies with the machine, the load and the disk, so pieces are sized by time.
 */
export const PIECE_TARGET_MS = 25;

/**
 * The size of the next background piece (units of a build step, events of a refresh round), so
 * that each takes about PIECE_TARGET_MS: after each piece, its size scaled by target / time taken,
 * at most doubled or halved at a time (one slow commit does not shrink the next piece to nothing)
 * and kept within [min, max].
 */
export class PieceSize {
  #size: number;

  constructor(
    initial: number,
    private readonly min: number,
    private readonly max: number,
    private readonly targetMs = PIECE_TARGET_MS,
  ) {
    if (!(min >= 1 && min <= initial && initial <= max)) throw new Error(`a piece size needs 1 <= min <= initial <= max, got ${min}, ${initial}, ${max}`);
    this.#size = initial;
  }

  get current(): number {
    return this.#size;
  }

  /** A piece of the current size took `ms` of work: sets the next one's size. */
  observe(ms: number): void {
    const scaled = (this.#size * this.targetMs) / Math.max(ms, 0.1);
    const bounded = Math.min(this.#size * 2, Math.max(this.#size / 2, scaled));
    this.#size = Math.round(Math.min(this.max, Math.max(this.min, bounded)));
  }
}

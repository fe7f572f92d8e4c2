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
 * How long after its last request the process still counts as serving. Pieces rest and stay short
 * only then: with nothing to yield to, the rests only doubled a refresh's wall time, and pieces cut
 * to PIECE_TARGET_MS paid each round's fixed cost (its commit, its watermark and state, its scratch
 * table) hundreds of times: a refresh after +1% at 1M units on SQLite had gone from 0.46 s to 4.1 s,
 * in 187 rounds of about 100 events (docs/analysis.md "Incremental analysis").
 */
export const SERVING_WINDOW_MS = 1_000;

/**
 * Long writes that run in the background of serving, in pieces of their own transaction: a
 * SQLite build of an experiment's rollups in steps and a refresh in rounds
 * (features/analysis/sql/rollup/steps.ts, sql/rollup/refresh.ts). The pieces of every experiment take
 * turns, one at a time in the process, each followed by a rest of `restRatio` times what it took
 * (at least MIN_REST_MS), in which first assignments, drains and the API's own writes get the
 * writer thread and the file's lock. That is while the process serves (a request within
 * SERVING_WINDOW_MS, noted by the HTTP server): otherwise, and in a one-shot command (`verdict
 * analyze`), each piece rests only the minimum, and pieces are sized to IDLE_PIECE_TARGET_MS.
 */
export class BackgroundWrites {
  readonly #restRatio: number;
  #turn: Promise<unknown> = Promise.resolve();
  #lastRequest = Number.NEGATIVE_INFINITY;

  constructor(restRatio: number) {
    if (!(restRatio >= 0)) throw new Error(`the rest ratio must be 0 or more, got ${restRatio}`);
    this.#restRatio = restRatio;
  }

  /** A request arrived: for SERVING_WINDOW_MS the pieces rest and stay short. */
  noteRequest(): void {
    this.#lastRequest = performance.now();
  }

  /** Whether a request arrived within SERVING_WINDOW_MS. */
  get serving(): boolean {
    return performance.now() - this.#lastRequest < SERVING_WINDOW_MS;
  }

  /** How long the next piece should take (PieceSize): short while serving, longer while not. */
  get pieceTargetMs(): number {
    return this.serving ? PIECE_TARGET_MS : IDLE_PIECE_TARGET_MS;
  }

  /** Runs `piece` when every piece asked for before it has run and rested; settles as it did, after its own rest. */
  run<T>(piece: () => Promise<T>): Promise<T> {
    const result = this.#turn.then(async () => {
      const started = performance.now();
      try {
        return await piece();
      } finally {
        const rest = this.serving ? (performance.now() - started) * this.#restRatio : 0;
        await sleep(Math.max(MIN_REST_MS, rest));
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
 * How long a build step may hold the writer thread while the process serves nothing: a step's
 * fixed cost (its commit, its progress, the totals it rewrites) is then a few percent of it. The
 * first request after a quiet spell may wait for the rest of one such step; the next steps shrink
 * to PIECE_TARGET_MS at once. (A refresh's rounds then take IDLE_ROUND_EVENTS each: sql/rollup/refresh.ts.)
 */
export const IDLE_PIECE_TARGET_MS = 250;

/**
 * The size of the next background piece (units of a build step, events of a refresh round), so
 * that each takes about the target (BackgroundWrites.pieceTargetMs): after each piece, its size
 * scaled by target / time taken, at most doubled or halved at a time (one slow commit does not
 * shrink the next piece to nothing) and kept within [min, max]. When the target falls (requests
 * arrived), the size falls to it at once: the pieces were sized for no one waiting.
 */
export class PieceSize {
  #size: number;
  #lastTargetMs: number;

  constructor(
    initial: number,
    private readonly min: number,
    private readonly max: number,
    private readonly targetMs = PIECE_TARGET_MS,
  ) {
    if (!(min >= 1 && min <= initial && initial <= max)) throw new Error(`a piece size needs 1 <= min <= initial <= max, got ${min}, ${initial}, ${max}`);
    this.#size = initial;
    this.#lastTargetMs = targetMs;
  }

  get current(): number {
    return this.#size;
  }

  /** A piece of the current size took `ms` of work: sets the next one's size, for `targetMs` (the constructor's without). */
  observe(ms: number, targetMs = this.targetMs): void {
    const scaled = (this.#size * targetMs) / Math.max(ms, 0.1);
    const floor = targetMs < this.#lastTargetMs ? 0 : this.#size / 2;
    const bounded = Math.min(this.#size * 2, Math.max(floor, scaled));
    this.#size = Math.round(Math.min(this.max, Math.max(this.min, bounded)));
    this.#lastTargetMs = targetMs;
  }
}

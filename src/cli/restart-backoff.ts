/** The first restart of a dead HTTP process waits this long; each further death in a row doubles it. */
const RESTART_BASE_MS = 1_000;
/** The longest wait between restarts, however often a process dies. */
const RESTART_CAP_MS = 30_000;
/** A process that served this long before it died starts the count afresh. */
const STABLE_AFTER_MS = 60_000;

/**
 * When the primary of `serve --processes N` starts one of its processes again: at once would
 * spin while the cause lasts (a process killed again and again, a database that is down), so
 * the wait doubles with each death in a row, from 1 s up to 30 s.
 */
export class RestartBackoff {
  #deathsInARow = 0;

  /** The wait before the next start; `servedForMs` is how long the dead process had listened (null: never). */
  next(servedForMs: number | null): number {
    if (servedForMs !== null && servedForMs >= STABLE_AFTER_MS) this.#deathsInARow = 0;
    const delay = Math.min(RESTART_BASE_MS * 2 ** this.#deathsInARow, RESTART_CAP_MS);
    this.#deathsInARow += 1;
    return delay;
  }
}

/**
 * An approximate, cheap count of pending events for back-pressure: the last count read from
 * the store, adjusted by what this process appended and drained since, and re-read at most
 * every `maxAgeMs` in the background. Other processes' appends show up within that age, which
 * is close enough for a limit whose purpose is to stop unbounded growth.
 */
export class PendingGauge {
  #value = 0;
  #readAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | null = null;

  constructor(
    private readonly count: () => Promise<number>,
    private readonly maxAgeMs = 250,
  ) {}

  async read(): Promise<number> {
    if (performance.now() - this.#readAt > this.maxAgeMs) {
      this.#refreshing ??= this.#refresh().finally(() => {
        this.#refreshing = null;
      });
      // Only the very first reading is waited for; later ones refresh behind the caller.
      if (this.#readAt === Number.NEGATIVE_INFINITY) await this.#refreshing;
    }
    return this.#value;
  }

  add(delta: number): void {
    this.#value = Math.max(0, this.#value + delta);
  }

  set(value: number): void {
    this.#value = value;
    this.#readAt = performance.now();
  }

  async #refresh(): Promise<void> {
    try {
      this.set(await this.count());
    } catch (error) {
      // Keep the last value; a first reading that fails is the caller's failure.
      if (this.#readAt === Number.NEGATIVE_INFINITY) throw error;
    }
  }
}

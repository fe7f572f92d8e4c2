/**
 * Latency samples for the benchmarks, kept whole (a histogram rounds them) so percentiles are
 * exact: one implementation for the closed-loop harness and the open-loop soak.
 */
export class Samples {
  #values = new Float64Array(1024);
  #count = 0;

  add(ms: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#count++] = ms;
  }

  addAll(other: Samples): void {
    for (const value of other.values()) this.add(value);
  }

  get count(): number {
    return this.#count;
  }

  values(): Float64Array {
    return this.#values.subarray(0, this.#count);
  }

  mean(): number {
    let sum = 0;
    for (const value of this.values()) sum += value;
    return this.#count === 0 ? 0 : sum / this.#count;
  }

  /** The given percentiles (nearest rank); zeros when empty. */
  percentiles(...ranks: number[]): number[] {
    const sorted = Float64Array.from(this.values()).sort();
    return ranks.map((rank) => (this.#count === 0 ? 0 : (sorted[Math.min(this.#count - 1, Math.ceil((rank / 100) * this.#count) - 1)] ?? 0)));
  }

  /** p50, p99 and max; zeros when empty. */
  summary(): { p50: number; p99: number; max: number } {
    const [p50 = 0, p99 = 0, max = 0] = this.percentiles(50, 99, 100);
    return { p50, p99, max };
  }

  /** How many samples are above `ms`. */
  countAbove(ms: number): number {
    let above = 0;
    for (const value of this.values()) if (value > ms) above += 1;
    return above;
  }
}

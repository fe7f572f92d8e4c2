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

/** What a summary line needs from a set of latencies, kept whole or in a histogram. */
export interface LatencySummary {
  readonly count: number;
  summary(): { p50: number; p99: number; max: number };
  countAbove(ms: number): number;
}

/**
 * Latencies over a whole long run, in log-spaced buckets 0.5% wide: constant memory and a
 * summary in microseconds, where sorting an hour's samples (7M) would stall the load generator's
 * thread for seconds and skew the very windows it measures. Percentiles are exact to within a
 * bucket (reported as the bucket's upper edge, capped at the exact max); the count above the
 * threshold given at construction is exact.
 */
export class LatencyHistogram implements LatencySummary {
  static readonly #FLOOR_MS = 0.001;
  static readonly #GROWTH = Math.log(1.005);
  #buckets = new Float64Array(4096);
  #count = 0;
  #max = 0;
  #above = 0;

  constructor(private readonly exactAboveMs: number) {}

  add(ms: number): void {
    const index = Math.max(
      0,
      Math.min(this.#buckets.length - 1, Math.ceil(Math.log(Math.max(ms, LatencyHistogram.#FLOOR_MS) / LatencyHistogram.#FLOOR_MS) / LatencyHistogram.#GROWTH)),
    );
    this.#buckets[index] = (this.#buckets[index] ?? 0) + 1;
    this.#count += 1;
    this.#max = Math.max(this.#max, ms);
    if (ms > this.exactAboveMs) this.#above += 1;
  }

  get count(): number {
    return this.#count;
  }

  summary(): { p50: number; p99: number; max: number } {
    return { p50: this.#percentile(50), p99: this.#percentile(99), max: this.#max };
  }

  /** Exact for the threshold given at construction, which is the only one the soak asks for. */
  countAbove(ms: number): number {
    if (ms !== this.exactAboveMs) throw new Error(`LatencyHistogram counts exactly only above ${this.exactAboveMs} ms`);
    return this.#above;
  }

  #percentile(rank: number): number {
    if (this.#count === 0) return 0;
    const target = Math.ceil((rank / 100) * this.#count);
    let seen = 0;
    for (let index = 0; index < this.#buckets.length; index += 1) {
      seen += this.#buckets[index] ?? 0;
      if (seen >= target) return Math.min(this.#max, LatencyHistogram.#FLOOR_MS * Math.exp(index * LatencyHistogram.#GROWTH));
    }
    return this.#max;
  }
}

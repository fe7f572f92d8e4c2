/**
 * Which assignments read back from the database the sticky cache takes once it is full: those
 * missed twice within a short period (the "doorkeeper" of TinyLFU, Einziger et al. 2017).
 *
 * With more (experiment, unit) pairs in use than the cache holds, caching every miss replaced
 * one entry per miss: 1,640 a second in bench:soak (340,000 units in three experiments, a cache
 * of 200,000). The replaced entries had lived long enough to be old-generation objects, so the
 * API thread's heap grew by about 1 MB a second of garbage that only a major collection clears,
 * and each of those, every 40-60 s, came with an event-loop stall of 100-200 ms. A pair missed
 * once is most often not asked for again soon (it is one of many), a pair missed twice in a
 * period is, so the cache keeps turning over for returning units and barely at all for the rest.
 *
 * The filter is a bitmap of hashed keys, cleared after a set number of first misses: no object
 * per key, so it makes no garbage itself. A hash collision admits a pair on its first miss,
 * which only costs a cache entry.
 */
export class SecondMissFilter {
  readonly #bits: Uint32Array;
  readonly #mask: number;
  readonly #period: number;
  #firstMisses = 0;

  /** `bits`: the bitmap's size, a power of two; `period`: first misses after which it starts over. */
  constructor(bits = 1 << 22, period = 100_000) {
    if (!Number.isInteger(Math.log2(bits)) || bits < 32) throw new Error('the filter needs a power of two of at least 32 bits');
    this.#bits = new Uint32Array(bits / 32);
    this.#mask = bits - 1;
    this.#period = period;
  }

  /** Whether `key` was missed before in this period; the first time, it is remembered and refused. */
  admit(key: string): boolean {
    const bit = fnv1a(key) & this.#mask;
    const word = bit >>> 5;
    const flag = 1 << (bit & 31);
    if (((this.#bits[word] as number) & flag) !== 0) return true;
    this.#bits[word] = (this.#bits[word] as number) | flag;
    this.#firstMisses += 1;
    if (this.#firstMisses >= this.#period) {
      this.#bits.fill(0);
      this.#firstMisses = 0;
    }
    return false;
  }
}

/** 32-bit FNV-1a over the string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

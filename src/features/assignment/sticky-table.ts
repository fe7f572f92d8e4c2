import { hash } from 'node:crypto';
import type { CachedAssignment } from './store.js';

/**
 * The sticky cache: stored assignments by (experiment, unit), kept outside the JavaScript heap in
 * one preallocated buffer of 64-byte slots (open addressing, linear probing).
 *
 * Why not a Map of objects (lru-cache, as before): an entry there was about 750 bytes in five
 * objects the garbage collector marks on every major collection, and a full cache turned every
 * miss into an eviction, an old-generation object dying. bench:soak (1,020,000 pairs, 200,000
 * cached) made 1.5-2 MB/s of such garbage; the major collections it forced, marking a 200-390 MB
 * heap on the same two cores as the requests, were the soak's 100-300 ms stalls. Here an entry
 * costs 64 bytes the collector never looks at, and an eviction frees nothing.
 *
 * A key is the first 16 bytes of SHA-256(experiment id, NUL, unit id): unit ids come from
 * clients, so the digest must be one nobody can make collide, and 128 bits keep an accidental
 * collision out of reach (about 1e-27 at a million entries). Eviction is CLOCK (second chance),
 * close to least-recently-used without moving anything on a hit.
 */
const SLOT_BYTES = 64;
const LOAD = 0.7;
// Byte offsets in a slot.
const VARIANT_AT = 16; // uint16: 0 for no variant, else 1 + its index in #variants
const REASON_AT = 18; // uint8: 1 + its index in #reasons
const FLAGS_AT = 19;
const ID_LENGTH_AT = 20;
const ID_AT = 21;
const MAX_ID_BYTES = 27; // a ULID (lib/ids.ts) is 26
const EXPOSED_AT = 48; // float64 ms, NaN for none
const STORED_AT = 56; // float64 ms, when it was kept
const OCCUPIED = 1;
const REFERENCED = 2;
/** An interned string's code must fit in its uint16 or uint8 field; past that the table starts again empty. */
const MAX_VARIANTS = 0xfffe;
const MAX_REASONS = 0xfe;
const STORABLE_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_ID_BYTES}}$`);

export interface StickyTableOptions {
  /** Entries kept at most. */
  capacity: number;
  /** An entry older than this is not answered (a missed change notice from another process). */
  ttlMs: number;
  /** Milliseconds, for the ttl. */
  now?: () => number;
}

export class StickyTable {
  readonly capacity: number;
  readonly #slots: number;
  readonly #bytes: Uint8Array;
  readonly #words: Uint32Array;
  readonly #halves: Uint16Array;
  readonly #doubles: Float64Array;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #size = 0;
  #hand = 0;
  // Variant keys and reasons are few; slots hold their codes.
  #variants: string[] = [];
  #variantCodes = new Map<string, number>();
  #reasons: string[] = [];
  #reasonCodes = new Map<string, number>();

  constructor({ capacity, ttlMs, now = Date.now }: StickyTableOptions) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    this.capacity = capacity;
    this.#slots = Math.max(8, Math.ceil(capacity / LOAD));
    const buffer = new ArrayBuffer(this.#slots * SLOT_BYTES);
    this.#bytes = new Uint8Array(buffer);
    this.#words = new Uint32Array(buffer);
    this.#halves = new Uint16Array(buffer);
    this.#doubles = new Float64Array(buffer);
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get size(): number {
    return this.#size;
  }

  get(experimentId: string, unitId: string): CachedAssignment | undefined {
    const digest = digestOf(experimentId, unitId);
    const slot = this.#find(digest);
    if (slot < 0) return undefined;
    if (this.#now() - (this.#doubles[slot * 8 + STORED_AT / 8] as number) >= this.#ttlMs) {
      this.#remove(slot);
      return undefined;
    }
    this.#bytes[slot * SLOT_BYTES + FLAGS_AT] = OCCUPIED | REFERENCED;
    return this.#read(slot);
  }

  /** Keeps the assignment; one whose id is not 1 to 27 ASCII characters (a ULID is 26) is not kept: the database answers it. */
  set(experimentId: string, unitId: string, value: CachedAssignment): void {
    if (!STORABLE_ID.test(value.id)) {
      this.delete(experimentId, unitId);
      return;
    }
    let codes = this.#codesOf(value);
    if (codes === null) {
      // More distinct variant keys than a code holds: start again rather than widen every slot.
      this.clear();
      codes = this.#codesOf(value) as { variant: number; reason: number };
    }
    const digest = digestOf(experimentId, unitId);
    let slot = this.#find(digest);
    if (slot < 0) {
      if (this.#size >= this.capacity) this.#evictOne();
      slot = this.#freeSlotFor(digest);
      this.#size += 1;
    }
    this.#write(slot, digest, value, codes);
  }

  delete(experimentId: string, unitId: string): void {
    const slot = this.#find(digestOf(experimentId, unitId));
    if (slot >= 0) this.#remove(slot);
  }

  clear(): void {
    this.#bytes.fill(0);
    this.#size = 0;
    this.#variants = [];
    this.#variantCodes = new Map();
    this.#reasons = [];
    this.#reasonCodes = new Map();
  }

  #home(digest: Buffer): number {
    return digest.readUInt32LE(0) % this.#slots;
  }

  #homeOfSlot(slot: number): number {
    return (this.#words[slot * 16] as number) % this.#slots;
  }

  #occupied(slot: number): boolean {
    return ((this.#bytes[slot * SLOT_BYTES + FLAGS_AT] as number) & OCCUPIED) !== 0;
  }

  #holds(slot: number, digest: Buffer): boolean {
    const word = slot * 16;
    return (
      this.#words[word] === digest.readUInt32LE(0) &&
      this.#words[word + 1] === digest.readUInt32LE(4) &&
      this.#words[word + 2] === digest.readUInt32LE(8) &&
      this.#words[word + 3] === digest.readUInt32LE(12)
    );
  }

  /** The slot holding the key, or -1. */
  #find(digest: Buffer): number {
    for (let slot = this.#home(digest); this.#occupied(slot); slot = (slot + 1) % this.#slots) {
      if (this.#holds(slot, digest)) return slot;
    }
    return -1;
  }

  /** The first empty slot of the key's probe sequence (there is one: the load stays under LOAD). */
  #freeSlotFor(digest: Buffer): number {
    let slot = this.#home(digest);
    while (this.#occupied(slot)) slot = (slot + 1) % this.#slots;
    return slot;
  }

  /** CLOCK: the hand clears the referenced flags it passes and evicts the first entry without one. */
  #evictOne(): void {
    for (;;) {
      const flags = this.#bytes[this.#hand * SLOT_BYTES + FLAGS_AT] as number;
      if (flags & REFERENCED) this.#bytes[this.#hand * SLOT_BYTES + FLAGS_AT] = OCCUPIED;
      else if (flags & OCCUPIED) {
        this.#remove(this.#hand);
        return;
      }
      this.#hand = (this.#hand + 1) % this.#slots;
    }
  }

  /**
   * Empties a slot and moves later entries of its probe run back into the gap (backward-shift
   * deletion), so that every entry stays reachable from its home slot without tombstones.
   */
  #remove(slot: number): void {
    let gap = slot;
    for (let next = (gap + 1) % this.#slots; this.#occupied(next); next = (next + 1) % this.#slots) {
      const home = this.#homeOfSlot(next);
      // The entry at `next` may move into the gap unless its home lies after the gap, cyclically.
      const homeAfterGap = gap <= next ? home > gap && home <= next : home > gap || home <= next;
      if (homeAfterGap) continue;
      this.#bytes.copyWithin(gap * SLOT_BYTES, next * SLOT_BYTES, (next + 1) * SLOT_BYTES);
      gap = next;
    }
    this.#bytes.fill(0, gap * SLOT_BYTES, (gap + 1) * SLOT_BYTES);
    this.#size -= 1;
  }

  #codesOf(value: CachedAssignment): { variant: number; reason: number } | null {
    const variant = value.variant_key === null ? 0 : this.#code(value.variant_key, this.#variants, this.#variantCodes, MAX_VARIANTS);
    const reason = this.#code(value.reason, this.#reasons, this.#reasonCodes, MAX_REASONS);
    return variant < 0 || reason < 0 ? null : { variant, reason };
  }

  #write(slot: number, digest: Buffer, value: CachedAssignment, { variant, reason }: { variant: number; reason: number }): void {
    const at = slot * SLOT_BYTES;
    this.#bytes.set(digest.subarray(0, 16), at);
    this.#bytes.fill(0, at + ID_AT, at + SLOT_BYTES);
    this.#bytes[at + ID_LENGTH_AT] = value.id.length;
    Buffer.from(this.#bytes.buffer, at + ID_AT, MAX_ID_BYTES).write(value.id, 'latin1');
    this.#halves[at / 2 + VARIANT_AT / 2] = variant;
    this.#bytes[at + REASON_AT] = reason;
    this.#bytes[at + FLAGS_AT] = OCCUPIED | REFERENCED;
    this.#doubles[at / 8 + EXPOSED_AT / 8] = value.exposure_logged_at ?? Number.NaN;
    this.#doubles[at / 8 + STORED_AT / 8] = this.#now();
  }

  #read(slot: number): CachedAssignment {
    const at = slot * SLOT_BYTES;
    const variant = this.#halves[at / 2 + VARIANT_AT / 2] as number;
    const exposed = this.#doubles[at / 8 + EXPOSED_AT / 8] as number;
    return {
      id: Buffer.from(this.#bytes.buffer, at + ID_AT, this.#bytes[at + ID_LENGTH_AT] as number).toString('latin1'),
      variant_key: variant === 0 ? null : (this.#variants[variant - 1] as string),
      reason: this.#reasons[(this.#bytes[at + REASON_AT] as number) - 1] as CachedAssignment['reason'],
      exposure_logged_at: Number.isNaN(exposed) ? null : exposed,
    };
  }

  /** 1 + the string's index in `list`, added if new; -1 when the list is full. */
  #code(value: string, list: string[], codes: Map<string, number>, max: number): number {
    let code = codes.get(value);
    if (code === undefined) {
      if (list.length >= max) return -1;
      list.push(value);
      code = list.length;
      codes.set(value, code);
    }
    return code;
  }
}

function digestOf(experimentId: string, unitId: string): Buffer {
  return hash('sha256', `${experimentId}\u0000${unitId}`, 'buffer');
}

/**
 * GrowthBook-compatible hashing ("v2"), so any GrowthBook SDK or a ten-line port in another
 * language reproduces the exact bucket the server stores. See docs/assignment.md.
 */

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 16777619;

/** Number of distinct buckets produced by the v2 hash; hashes are multiples of 1 / BUCKET_COUNT. */
export const BUCKET_COUNT = 10_000;

/**
 * 32-bit FNV-1a over UTF-16 code units (not UTF-8 bytes): that is what GrowthBook's JS SDK does
 * via `charCodeAt`, and matching it matters more than matching the byte-oriented reference.
 * For ASCII input both agree.
 */
export function fnv1a32(input: string): number {
  let hash = FNV_OFFSET_BASIS;
  for (let i = 0; i < input.length; i++) {
    hash ^= input.charCodeAt(i);
    // Math.imul keeps the multiply in 32-bit integer space; a plain `*` would lose low bits
    // once the product exceeds 2^53.
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/**
 * Integer bucket in [0, 9999]: `fnv1a32(String(fnv1a32(seed + value))) % 10000`.
 * The second round over the decimal string is GrowthBook's fix for the poor avalanche of
 * single-round FNV on inputs that differ only in their last characters.
 */
export function hashBucketV2(seed: string, value: string): number {
  return fnv1a32(String(fnv1a32(seed + value))) % BUCKET_COUNT;
}

/** GrowthBook `hash(seed, value, 2)`: a number in [0, 1) with four decimal places. */
export function hashV2(seed: string, value: string): number {
  return hashBucketV2(seed, value) / BUCKET_COUNT;
}

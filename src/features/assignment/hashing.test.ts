import { describe, expect, it } from 'vitest';

import { BUCKET_COUNT, fnv1a32, hashBucketV2, hashV2 } from './hashing.js';

describe('fnv1a32', () => {
  // Standard FNV-1a 32-bit test vectors (Landon Curt Noll's FNV reference test suite).
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['foobar', 0xbf9cf968],
  ])('fnv1a32(%j) is the reference value', (input, expected) => {
    expect(fnv1a32(input)).toBe(expected);
  });

  it('returns an unsigned 32-bit integer', () => {
    for (const input of ['x', 'long input '.repeat(50), '\u{1F600}', 'é']) {
      const hash = fnv1a32(input);
      expect(Number.isInteger(hash)).toBe(true);
      expect(hash).toBeGreaterThanOrEqual(0);
      expect(hash).toBeLessThan(2 ** 32);
    }
  });

  it('hashes UTF-16 code units, so an astral character counts as its two surrogates', () => {
    expect(fnv1a32('\u{1F600}')).toBe(fnv1a32('\uD83D\uDE00'));
  });
});

describe('hashV2 (GrowthBook hash version 2)', () => {
  // Source: GrowthBook packages/sdk-js/test/cases.json, "hash" cases with version 2.
  it.each([
    ['seed', 'a', 0.0505],
    ['seed', 'b', 0.2696],
    ['foo', 'ab', 0.2575],
    ['90850943850283058242805', '123', 0.7516],
  ])('hashV2(%j, %j) = %d', (seed, value, expected) => {
    expect(hashV2(seed, value)).toBe(expected);
  });

  it('is the integer bucket divided by 10000', () => {
    expect(hashBucketV2('seed', 'a')).toBe(505);
    expect(hashBucketV2('90850943850283058242805', '123')).toBe(7516);
    expect(BUCKET_COUNT).toBe(10_000);
  });

  it('stays in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const h = hashV2('exp', `unit-${i}`);
      expect(h).toBeGreaterThanOrEqual(0);
      expect(h).toBeLessThan(1);
    }
  });
});

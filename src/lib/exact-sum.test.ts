import { describe, expect, it } from 'vitest';
import { exactAdd, exactNegate, exactOf, exactProduct, exactToNumber, formatExact, parseExact, ZERO, type Exact } from './exact-sum.js';

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

describe('exact sums', () => {
  it('reads back every double, product and text exactly', () => {
    for (const x of [0, 1, -1, 0.1, 12.5, -3.75, 1e300, 5e-324, 2 ** 53 + 2, 123456.789]) {
      expect(exactToNumber(exactOf(x))).toBe(x);
      expect(exactToNumber(parseExact(formatExact(exactOf(x))))).toBe(x);
    }
    expect(exactToNumber(exactProduct(0.1, 0.1))).toBe(0.1 * 0.1);
    expect(exactToNumber(exactProduct(-2.5, 4))).toBe(-10);
  });

  it('a million differences applied leave the same sum as adding the final terms once (no drift)', () => {
    const rand = seeded(7);
    const values = Array.from({ length: 1000 }, () => Math.round(rand() * 1e6) / 100);
    let maintained: Exact = ZERO;
    for (const value of values) maintained = exactAdd(maintained, exactProduct(value, value));
    for (let step = 0; step < 1_000_000; step += 1) {
      const index = step % values.length;
      const old = values[index] as number;
      const next = Math.round(rand() * 1e6) / 100;
      maintained = exactAdd(exactAdd(maintained, exactNegate(exactProduct(old, old))), exactProduct(next, next));
      values[index] = next;
    }
    let direct: Exact = ZERO;
    for (const value of [...values].reverse()) direct = exactAdd(direct, exactProduct(value, value));
    expect(formatExact(maintained)).toBe(formatExact(direct));
    const naive = values.reduce((sum, value) => sum + value * value, 0);
    expect(Math.abs(exactToNumber(maintained) - naive) / naive).toBeLessThan(1e-12);
  });
});

import { describe, expect, it } from 'vitest';
import { SecondMissFilter } from './admission.js';

describe('SecondMissFilter', () => {
  it('refuses a key the first time and admits it the second, for each key on its own', () => {
    const filter = new SecondMissFilter(1 << 16, 1_000);
    expect(filter.admit('exp\u0000unit-1')).toBe(false);
    expect(filter.admit('exp\u0000unit-2')).toBe(false);
    expect(filter.admit('exp\u0000unit-1')).toBe(true);
    expect(filter.admit('exp\u0000unit-1')).toBe(true);
    expect(filter.admit('exp\u0000unit-2')).toBe(true);
  });

  it('forgets every key once a period of first misses has passed', () => {
    const filter = new SecondMissFilter(1 << 20, 3);
    expect(filter.admit('a')).toBe(false);
    expect(filter.admit('b')).toBe(false);
    // The third first miss ends the period: 'a' and 'b' start over.
    expect(filter.admit('c')).toBe(false);
    expect(filter.admit('a')).toBe(false);
    expect(filter.admit('a')).toBe(true);
  });

  it('admits few keys on their first miss (hash collisions) when many distinct keys pass', () => {
    const filter = new SecondMissFilter();
    let admittedFirstTime = 0;
    for (let unit = 0; unit < 100_000; unit += 1) if (filter.admit(`experiment-id\u0000unit-${unit}`)) admittedFirstTime += 1;
    // 100,000 keys in 4,194,304 bits: about 1.2% collide on average.
    expect(admittedFirstTime).toBeLessThan(2_500);
  });

  it('needs a power of two of at least 32 bits', () => {
    expect(() => new SecondMissFilter(1_000)).toThrow(/power of two/);
    expect(() => new SecondMissFilter(16)).toThrow(/power of two/);
  });
});

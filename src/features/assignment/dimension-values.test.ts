import { describe, expect, it } from 'vitest';
import { DIMENSION_VALUE_MAX_CHARS, dimensionValuesOf } from './dimension-values.js';

describe('dimensionValuesOf', () => {
  it('keeps only the experiment’s dimensions that the context gives a scalar value', () => {
    const context = { country: 'de', seats: 12, beta: true, plan: null, org: { id: 'x' }, tags: ['a'], other: 'ignored' };
    expect(JSON.parse(dimensionValuesOf(['country', 'seats', 'beta', 'plan', 'org', 'tags', 'missing'], context) as string)).toEqual({
      country: 'de',
      seats: '12',
      beta: 'true',
    });
  });

  it('stores nothing without dimensions, without a context, or when no dimension has a value', () => {
    expect(dimensionValuesOf([], { country: 'de' })).toBeNull();
    expect(dimensionValuesOf(['country'], undefined)).toBeNull();
    expect(dimensionValuesOf(['country'], { plan: 'pro' })).toBeNull();
    // Inherited properties are not the context's own.
    expect(dimensionValuesOf(['toString', 'constructor'], {})).toBeNull();
  });

  it('cuts values to 128 characters, counting code points', () => {
    const long = '😀'.repeat(DIMENSION_VALUE_MAX_CHARS + 5);
    const stored = JSON.parse(dimensionValuesOf(['emoji'], { emoji: long }) as string) as { emoji: string };
    expect(Array.from(stored.emoji)).toHaveLength(128);
    expect(stored.emoji).toBe('😀'.repeat(128));
  });
});

import { describe, expect, it } from 'vitest';
import { constantTimeEqual } from './secrets.js';

describe('constantTimeEqual', () => {
  it('is true only for identical strings', () => {
    expect(constantTimeEqual('a'.repeat(64), 'a'.repeat(64))).toBe(true);
    expect(constantTimeEqual('a'.repeat(64), `${'a'.repeat(63)}b`)).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });

  it('is false for strings of different lengths, including a prefix and multi-byte characters', () => {
    expect(constantTimeEqual('token', 'token-and-more')).toBe(false);
    expect(constantTimeEqual('tok', '')).toBe(false);
    // Same number of characters, different number of UTF-8 bytes.
    expect(constantTimeEqual('é', 'e')).toBe(false);
    expect(constantTimeEqual('éé', 'éé')).toBe(true);
  });
});

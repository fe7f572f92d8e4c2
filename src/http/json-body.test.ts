import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, pointerBeyondDepth } from './json-body.js';

function nest(depth: number, key = 'k'): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = level % 2 ? [value] : { [key]: value };
  return value;
}

describe('pointerBeyondDepth', () => {
  it('counts the top-level value as depth 1 and scalars as no depth', () => {
    expect(pointerBeyondDepth(nest(3), 3)).toBeNull();
    expect(pointerBeyondDepth(nest(4), 3)).not.toBeNull();
    expect(pointerBeyondDepth('text', 0)).toBeNull();
    expect(pointerBeyondDepth(null, 0)).toBeNull();
  });

  it('points at the first too-deep container in document order, escaping ~ and /', () => {
    const value = { shallow: [1], 'a/b': { '~c': [[]] }, later: [[[]]] };
    expect(pointerBeyondDepth(value, 3)).toBe('/a~1b/~0c/0');
  });

  it('walks 100,000 levels without overflowing the stack', () => {
    expect(pointerBeyondDepth(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)))).toBe('/0'.repeat(MAX_JSON_DEPTH));
  });
});

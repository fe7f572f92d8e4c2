import { describe, expect, it } from 'vitest';
import { firstJsonDefect, jsonDefectProblem, MAX_JSON_DEPTH, pointerBeyondDepth } from './json-body.js';

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

describe('firstJsonDefect', () => {
  it('finds the first refused value in document order: a non-finite number, a lone surrogate, U+0000, a key', () => {
    expect(firstJsonDefect({ a: [1, { b: Infinity }], c: '\ud800' })).toEqual({ pointer: '/a/1/b', message: expect.stringMatching(/finite/) });
    expect(firstJsonDefect({ a: [1, 2], c: 'x\ud800' })).toEqual({ pointer: '/c', message: expect.stringMatching(/lone UTF-16 surrogate/) });
    expect(firstJsonDefect({ 'k\u0000': 1 })).toEqual({ pointer: '/k\u0000', message: expect.stringMatching(/key containing U\+0000/) });
    expect(firstJsonDefect([{ x: [{}] }, -Infinity])).toEqual({ pointer: '/1', message: expect.stringMatching(/finite/) });
    expect(firstJsonDefect('\udfff')).toEqual({ pointer: '', message: expect.stringMatching(/surrogate/) });
    expect(firstJsonDefect({ ok: ['😀', 1.7e308, -0, 'a\u0001'] })).toBeNull();
  });

  it('reads every JSON number that overflows a double as a defect, whichever way it is written', () => {
    for (const text of ['1e309', '-1E+309', '10e308', `${'9'.repeat(210)}e99`, `${'9'.repeat(400)}`, '0.1e310', '1e0309']) {
      const body = `{"n":${text}}`;
      expect(jsonDefectProblem(JSON.parse(body), body)?.status, text).toBe(422);
    }
    for (const text of ['1e308', '1.7976931348623157e308', `${'9'.repeat(300)}`, '1e-400']) {
      const body = `{"n":${text}}`;
      expect(jsonDefectProblem(JSON.parse(body), body), text).toBeNull();
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { AudienceExpression } from '../assignment/audience.js';
import { segmentReferenceErrors, segmentReferenceSites } from './references.js';

const ref = (segment: string): AudienceExpression => ({ segment });
const leaf: AudienceExpression = { attribute: 'plan', op: 'eq', value: 'pro' };
const and = (...operands: AudienceExpression[]): AudienceExpression => ({ operator: 'and', operands });

/** a -> b -> c -> ... as stored rules, the last one a plain condition. */
function chain(...keys: string[]): Map<string, AudienceExpression | null> {
  return new Map(keys.map((key, index) => [key, index + 1 < keys.length ? ref(keys[index + 1] ?? '') : leaf]));
}

describe('segment references', () => {
  it('lists every reference with its pointer', () => {
    const tree = and(leaf, ref('a'), { operator: 'not', operands: [ref('b')] });
    expect(segmentReferenceSites(tree)).toEqual([
      { key: 'a', pointer: '/operands/1/segment' },
      { key: 'b', pointer: '/operands/2/operands/0/segment' },
    ]);
    expect(segmentReferenceSites(null)).toEqual([]);
  });

  it('accepts references to existing segments and rules without any', () => {
    const stored = chain('a', 'b');
    expect(segmentReferenceErrors('new', and(ref('a'), ref('b')), stored)).toEqual([]);
    expect(segmentReferenceErrors('new', null, stored)).toEqual([]);
  });

  it('reports each unknown segment at its pointer under /rule', () => {
    expect(segmentReferenceErrors('new', and(ref('ghost'), leaf, ref('phantom')), chain('a'))).toEqual([
      { pointer: '/rule/operands/0/segment', message: 'no segment with key "ghost" exists in this workspace' },
      { pointer: '/rule/operands/2/segment', message: 'no segment with key "phantom" exists in this workspace' },
    ]);
  });

  it('refuses a self reference and a longer cycle, pointing at the reference that closes it', () => {
    expect(segmentReferenceErrors('a', and(leaf, ref('a')), new Map())).toEqual([
      { pointer: '/rule/operands/1/segment', message: 'referring to segment "a" would create a cycle: a → a' },
    ]);
    const stored = chain('a', 'b', 'c');
    stored.set('c', ref('x'));
    stored.set('x', leaf);
    const [error] = segmentReferenceErrors('x', and(leaf, ref('a')), stored);
    expect(error).toEqual({ pointer: '/rule/operands/1/segment', message: 'referring to segment "a" would create a cycle: x → a → b → c → x' });
  });

  it('allows five levels and refuses a sixth below the saved segment', () => {
    expect(segmentReferenceErrors('top', ref('s2'), chain('s2', 's3', 's4', 's5'))).toEqual([]);
    const [error] = segmentReferenceErrors('top', ref('s2'), chain('s2', 's3', 's4', 's5', 's6'));
    expect(error?.pointer).toBe('/rule/segment');
    expect(error?.message).toMatch(/nest 6 levels deep \(top → s2 → s3 → s4 → s5 → s6\); at most 5/);
  });

  it('refuses a change that makes a chain above the saved segment too deep', () => {
    // u1 -> u2 -> u3 -> u4 -> mid (a plain condition now); mid starts referring to leafy.
    const stored = chain('u1', 'u2', 'u3', 'u4', 'mid');
    stored.set('leafy', leaf);
    const [error] = segmentReferenceErrors('mid', and(leaf, ref('leafy')), stored);
    expect(error?.pointer).toBe('/rule/operands/1/segment');
    expect(error?.message).toMatch(/u1 → u2 → u3 → u4 → mid → leafy/);
  });
});

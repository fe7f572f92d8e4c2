import { describe, expect, it } from 'vitest';

import { AUDIENCE_LIMITS, collectSegmentKeys, findSegmentReferenceProblem, validateAudience } from './audience.js';
import type { AudienceExpression, SegmentResolver } from './audience.js';

function pointers(tree: unknown): string[] {
  return validateAudience(tree).map((issue) => issue.pointer);
}

function only(tree: unknown): { pointer: string; message: string } {
  const issues = validateAudience(tree);
  expect(issues).toHaveLength(1);
  return issues[0] ?? { pointer: '?', message: '?' };
}

describe('validateAudience: valid trees', () => {
  it.each([
    ['null (everyone)', null],
    ['a leaf', { attribute: 'country', op: 'eq', value: 'DE' }],
    ['a segment', { segment: 'beta-users' }],
    ['in', { attribute: 'a', op: 'in', value: ['x', 1, true] }],
    ['gt number', { attribute: 'a', op: 'gt', value: 18 }],
    ['lte date', { attribute: 'a', op: 'lte', value: '2024-12-31' }],
    ['lt date-time', { attribute: 'a', op: 'lt', value: '2024-12-31T23:59:59.999+05:30' }],
    ['exists false', { attribute: 'a', op: 'exists', value: false }],
    ['semver with v', { attribute: 'a', op: 'semver_gt', value: 'v1.2.3-rc.1' }],
    ['regex', { attribute: 'a', op: 'regex', value: '^[a-z]+@example\\.com$' }],
    ['dot path', { attribute: 'user.org.id', op: 'eq', value: 'x' }],
    [
      'nested',
      {
        operator: 'and',
        operands: [
          { operator: 'not', operands: [{ segment: 'staff' }] },
          { operator: 'or', operands: [{ attribute: 'plan', op: 'in', value: ['pro', 'team'] }] },
        ],
      },
    ],
  ])('%s', (_name, tree) => {
    expect(validateAudience(tree)).toEqual([]);
  });
});

describe('validateAudience: pointers and messages', () => {
  it('points at an unknown op inside operands', () => {
    const issue = only({
      operator: 'and',
      operands: [
        { attribute: 'country', op: 'eq', value: 'DE' },
        { attribute: 'plan', op: 'like', value: 'pro' },
      ],
    });
    expect(issue.pointer).toBe('/operands/1/op');
    expect(issue.message).toMatch(/unknown op 'like'; expected one of eq, neq/);
  });

  it('points at an unknown operator', () => {
    const issue = only({ operator: 'xor', operands: [{ segment: 'a' }] });
    expect(issue).toEqual({ pointer: '/operator', message: expect.stringMatching(/unknown operator 'xor'/) });
  });

  it.each([
    [{ operands: [{ segment: 'a' }] }, '/operator', /operator is required/],
    [{ operator: 'and' }, '/operands', /operands is required/],
    [{ operator: 'and', operands: {} }, '/operands', /must be an array/],
    [{ operator: 'or', operands: [] }, '/operands', /at least one/],
    [{ operator: 'not', operands: [{ segment: 'a' }, { segment: 'b' }] }, '/operands', /exactly one operand, got 2/],
    [{ operator: 'not', operands: [] }, '/operands', /exactly one operand, got 0/],
    [{ op: 'eq', value: 'x' }, '/attribute', /attribute is required/],
    [{ attribute: '', op: 'eq', value: 'x' }, '/attribute', /non-empty string/],
    [{ attribute: 7, op: 'eq', value: 'x' }, '/attribute', /non-empty string/],
    [{ attribute: 'a..b', op: 'eq', value: 'x' }, '/attribute', /empty path segment/],
    [{ attribute: 'x'.repeat(257), op: 'eq', value: 'x' }, '/attribute', /at most 256/],
    [{ attribute: 'a', value: 'x' }, '/op', /op is required/],
    [{ attribute: 'a', op: 3, value: 'x' }, '/op', /unknown op 3/],
    [{ attribute: 'a', op: 'eq' }, '/value', /value is required for op 'eq'/],
    [{ segment: 'Bad Key' }, '/segment', /segment key matching/],
    [{ segment: 42 }, '/segment', /segment key/],
    [{}, '', /must be a compound/],
    ['country = DE', '', /must be an object/],
    [[], '', /must be an object/],
  ])('%j -> %s', (tree, pointer, message) => {
    const issue = only(tree);
    expect(issue.pointer).toBe(pointer);
    expect(issue.message).toMatch(message);
  });

  it('reports unknown properties, escaping the pointer per RFC 6901', () => {
    expect(pointers({ attribute: 'a', op: 'eq', value: 'x', 'a/b~c': 1 })).toEqual(['/a~1b~0c']);
    const mixed = validateAudience({ operator: 'and', operands: [{ segment: 'a' }], attribute: 'x' });
    expect(mixed).toEqual([{ pointer: '/attribute', message: expect.stringMatching(/unknown property 'attribute' on a compound node/) }]);
    expect(pointers({ segment: 'a', op: 'eq' })).toEqual(['/op']);
  });

  it('reports every problem, not just the first', () => {
    expect(
      pointers({
        operator: 'or',
        operands: [{ attribute: 'a', op: 'in', value: 'x' }, { segment: 'ok' }, { operator: 'not', operands: [null] }],
      }),
    ).toEqual(['/operands/0/value', '/operands/2/operands/0']);
  });
});

describe('validateAudience: value types per op', () => {
  function valueIssue(op: string, value: unknown): string | undefined {
    const issues = validateAudience({ attribute: 'a', op, value });
    return issues.length === 0 ? undefined : `${issues[0]?.pointer} ${issues[0]?.message}`;
  }

  it('eq / neq take one string, number or boolean', () => {
    for (const op of ['eq', 'neq']) {
      expect(valueIssue(op, 'x')).toBeUndefined();
      expect(valueIssue(op, 0)).toBeUndefined();
      expect(valueIssue(op, false)).toBeUndefined();
      expect(valueIssue(op, null)).toMatch(/^\/value value must be a string, number or boolean \(op '(eq|neq)'\)$/);
      expect(valueIssue(op, ['x'])).toMatch(/must be a string, number or boolean/);
      expect(valueIssue(op, { a: 1 })).toMatch(/must be a string, number or boolean/);
      expect(valueIssue(op, 'x'.repeat(AUDIENCE_LIMITS.maxStringLength + 1))).toMatch(/at most 1024/);
    }
  });

  it('in / not_in take a non-empty array of scalars, pointing at the bad element', () => {
    for (const op of ['in', 'not_in']) {
      expect(valueIssue(op, ['a', 2])).toBeUndefined();
      expect(valueIssue(op, 'a')).toMatch(/^\/value value must be an array/);
      expect(valueIssue(op, [])).toMatch(/1 to 1000 elements/);
      expect(
        valueIssue(
          op,
          Array.from({ length: 1001 }, (_, i) => i),
        ),
      ).toMatch(/1 to 1000 elements/);
      expect(valueIssue(op, ['a', 'b', { c: 1 }])).toMatch(/^\/value\/2 list element must be a string, number or boolean/);
      expect(valueIssue(op, ['a', null])).toMatch(/^\/value\/1 /);
    }
  });

  it('gt / gte / lt / lte take a number or an ISO 8601 date', () => {
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      expect(valueIssue(op, -1.5)).toBeUndefined();
      expect(valueIssue(op, '2024-02-29')).toBeUndefined();
      expect(valueIssue(op, '2024-02-29T12:00Z')).toBeUndefined();
      expect(valueIssue(op, '2024-02-29T12:00:00-08:00')).toBeUndefined();
      expect(valueIssue(op, '2023-02-29')).toMatch(/number or an ISO 8601 date/);
      expect(valueIssue(op, '2024-02-29T12:00:00')).toMatch(/with Z or an offset/);
      expect(valueIssue(op, '2024-13-01')).toMatch(/ISO 8601/);
      expect(valueIssue(op, '2024-01-01T24:00:00Z')).toMatch(/ISO 8601/);
      expect(valueIssue(op, '18')).toMatch(/ISO 8601/);
      expect(valueIssue(op, '1.2.3')).toMatch(/semver_gt\/semver_lt for versions/);
      expect(valueIssue(op, true)).toMatch(/ISO 8601/);
      expect(valueIssue(op, [1])).toMatch(/ISO 8601/);
    }
  });

  it('contains / starts_with / ends_with take a non-empty string', () => {
    for (const op of ['contains', 'starts_with', 'ends_with']) {
      expect(valueIssue(op, 'abc')).toBeUndefined();
      expect(valueIssue(op, '')).toMatch(/non-empty string/);
      expect(valueIssue(op, 5)).toMatch(/must be a string/);
    }
  });

  it('exists takes a boolean', () => {
    expect(valueIssue('exists', true)).toBeUndefined();
    expect(valueIssue('exists', 'true')).toMatch(/must be a boolean/);
    expect(valueIssue('exists', 1)).toMatch(/must be a boolean/);
  });

  it('semver ops take a valid semantic version', () => {
    for (const op of ['semver_gt', 'semver_lt']) {
      expect(valueIssue(op, '1.2.3')).toBeUndefined();
      expect(valueIssue(op, '1.2')).toMatch(/'1.2' is not a valid semantic version/);
      expect(valueIssue(op, 'latest')).toMatch(/not a valid semantic version/);
      expect(valueIssue(op, 123)).toMatch(/not a valid semantic version/);
    }
  });

  it('regex must compile under RE2 (no backreferences or lookaround)', () => {
    expect(valueIssue('regex', '^a.*b$')).toBeUndefined();
    expect(valueIssue('regex', '(a')).toMatch(/regex does not compile \(RE2 syntax\): .*missing closing \)/);
    expect(valueIssue('regex', '(a)\\1')).toMatch(/does not compile/);
    expect(valueIssue('regex', '(?=a)')).toMatch(/does not compile/);
    expect(valueIssue('regex', '')).toMatch(/non-empty/);
    expect(valueIssue('regex', 7)).toMatch(/must be a string/);
  });
});

describe('validateAudience: limits', () => {
  function nest(levels: number): unknown {
    let node: unknown = { attribute: 'a', op: 'eq', value: 1 };
    for (let i = 1; i < levels; i++) {
      node = { operator: 'not', operands: [node] };
    }
    return node;
  }

  it(`accepts depth ${AUDIENCE_LIMITS.maxDepth} and rejects one more, pointing at the deep node`, () => {
    expect(validateAudience(nest(AUDIENCE_LIMITS.maxDepth))).toEqual([]);
    const issue = only(nest(AUDIENCE_LIMITS.maxDepth + 1));
    expect(issue.pointer).toBe('/operands/0'.repeat(AUDIENCE_LIMITS.maxDepth));
    expect(issue.message).toMatch(/nested deeper than 10 levels/);
  });

  it(`accepts ${AUDIENCE_LIMITS.maxNodes} nodes and rejects more, once`, () => {
    const operands = (n: number) => Array.from({ length: n }, () => ({ attribute: 'a', op: 'eq', value: 1 }));
    expect(validateAudience({ operator: 'or', operands: operands(AUDIENCE_LIMITS.maxNodes - 1) })).toEqual([]);
    const issue = only({ operator: 'or', operands: operands(AUDIENCE_LIMITS.maxNodes + 50) });
    expect(issue.pointer).toBe(`/operands/${AUDIENCE_LIMITS.maxNodes - 1}`);
    expect(issue.message).toMatch(/more than 200 nodes/);
  });

  it('caps the number of reported issues', () => {
    const operands = Array.from({ length: 150 }, () => ({ attribute: 'a', op: 'nope', value: 1 }));
    expect(validateAudience({ operator: 'or', operands })).toHaveLength(AUDIENCE_LIMITS.maxIssues);
  });
});

describe('collectSegmentKeys', () => {
  it('lists distinct keys in order of first appearance', () => {
    const tree: AudienceExpression = {
      operator: 'or',
      operands: [{ segment: 'b' }, { operator: 'not', operands: [{ segment: 'a' }] }, { attribute: 'x', op: 'eq', value: 1 }, { segment: 'b' }],
    };
    expect(collectSegmentKeys(tree)).toEqual(['b', 'a']);
    expect(collectSegmentKeys(null)).toEqual([]);
    expect(collectSegmentKeys({ attribute: 'x', op: 'exists', value: true })).toEqual([]);
  });
});

describe('findSegmentReferenceProblem', () => {
  function resolver(rules: Record<string, AudienceExpression | null>): SegmentResolver {
    return (key) => rules[key];
  }
  const leaf: AudienceExpression = { attribute: 'x', op: 'eq', value: 1 };

  it('returns null for a clean graph, including shared segments and rule-less ones', () => {
    const rules = {
      root: { operator: 'and', operands: [{ segment: 'a' }, { segment: 'b' }] },
      a: { segment: 'shared' },
      b: { operator: 'or', operands: [{ segment: 'shared' }, { segment: 'empty' }] },
      shared: leaf,
      empty: null,
    } satisfies Record<string, AudienceExpression | null>;
    expect(findSegmentReferenceProblem('root', resolver(rules))).toBeNull();
  });

  it('finds cycles, including self-references', () => {
    expect(findSegmentReferenceProblem('a', resolver({ a: { segment: 'a' } }))).toEqual({ kind: 'cycle', path: ['a', 'a'] });
    const rules = { a: { segment: 'b' }, b: { operator: 'or', operands: [leaf, { segment: 'c' }] }, c: { segment: 'a' } } satisfies Record<
      string,
      AudienceExpression
    >;
    expect(findSegmentReferenceProblem('a', resolver(rules))).toEqual({ kind: 'cycle', path: ['a', 'b', 'c', 'a'] });
  });

  it('finds unknown segments and chains deeper than maxSegmentNesting', () => {
    expect(findSegmentReferenceProblem('a', resolver({ a: { segment: 'ghost' } }))).toEqual({
      kind: 'unknown_segment',
      path: ['a', 'ghost'],
    });
    const chain: SegmentResolver = (key) => (key === 's9' ? leaf : { segment: `s${Number(key.slice(1)) + 1}` });
    const limit = AUDIENCE_LIMITS.maxSegmentNesting;
    expect(findSegmentReferenceProblem(`s${10 - limit}`, chain)).toBeNull();
    expect(findSegmentReferenceProblem(`s${9 - limit}`, chain)?.kind).toBe('too_deep');
  });
});

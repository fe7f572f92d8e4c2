import { describe, expect, it } from 'vitest';

import { AUDIENCE_LIMITS, evaluateAudience } from './audience.js';
import type { AudienceExpression, AudienceLeaf, SegmentResolver } from './audience.js';

const context = {
  country: 'DE',
  plan: 'pro',
  age: 34,
  age_text: '34',
  beta: true,
  score: 0,
  nothing: null,
  email: 'ada@example.com',
  app_version: '2.10.0',
  signup: '2024-03-15T10:00:00Z',
  signup_day: '2024-03-15',
  tags: ['beta', 'staff'],
  user: { plan: 'team', org: { id: 'org_1' }, devices: ['ios', 'web'] },
};

function leaf(attribute: string, op: AudienceLeaf['op'], value: AudienceLeaf['value']): AudienceLeaf {
  return { attribute, op, value };
}

function check(node: AudienceExpression, ctx: Record<string, unknown> = context): boolean {
  return evaluateAudience(node, ctx);
}

describe('evaluateAudience: operators', () => {
  it.each([
    ['eq string', leaf('country', 'eq', 'DE'), true],
    ['eq is case-sensitive', leaf('country', 'eq', 'de'), false],
    ['eq number', leaf('age', 'eq', 34), true],
    ['eq boolean', leaf('beta', 'eq', true), true],
    ['eq zero', leaf('score', 'eq', 0), true],
    ['eq does not coerce "34" to 34', leaf('age_text', 'eq', 34), false],
    ['eq does not coerce 34 to "34"', leaf('age', 'eq', '34'), false],
    ['eq does not coerce true to "true"', leaf('beta', 'eq', 'true'), false],
    ['eq on a list attribute is false', leaf('tags', 'eq', 'beta'), false],
    ['neq different', leaf('country', 'neq', 'US'), true],
    ['neq same', leaf('country', 'neq', 'DE'), false],
    ['neq other type', leaf('age', 'neq', '34'), true],
    ['in', leaf('country', 'in', ['US', 'DE']), true],
    ['in absent', leaf('country', 'in', ['US', 'FR']), false],
    ['in numbers', leaf('age', 'in', [18, 34]), true],
    ['in strict types', leaf('age', 'in', ['34']), false],
    ['in with a list attribute intersects', leaf('tags', 'in', ['staff', 'x']), true],
    ['in with a list attribute, disjoint', leaf('tags', 'in', ['x', 'y']), false],
    ['not_in', leaf('country', 'not_in', ['US', 'FR']), true],
    ['not_in member', leaf('country', 'not_in', ['US', 'DE']), false],
    ['not_in with a list attribute', leaf('tags', 'not_in', ['beta']), false],
    ['gt', leaf('age', 'gt', 33), true],
    ['gt equal', leaf('age', 'gt', 34), false],
    ['gte equal', leaf('age', 'gte', 34), true],
    ['lt', leaf('age', 'lt', 35), true],
    ['lt equal', leaf('age', 'lt', 34), false],
    ['lte equal', leaf('age', 'lte', 34), true],
    ['gt decimal', leaf('age', 'gt', 33.5), true],
    ['gte accepts a numeric string attribute', leaf('age_text', 'gte', 18), true],
    ['gt on a non-numeric string', leaf('country', 'gt', 1), false],
    ['gt on a boolean', leaf('beta', 'gt', 0), false],
    ['gt date-time', leaf('signup', 'gt', '2024-03-15T09:59:59Z'), true],
    ['gt date-time with offset', leaf('signup', 'gt', '2024-03-15T11:00:00+02:00'), true],
    ['lt date-time with offset', leaf('signup', 'lt', '2024-03-15T11:00:01+01:00'), true],
    ['gte date-only is midnight UTC', leaf('signup', 'gte', '2024-03-15'), true],
    ['lt date-only', leaf('signup', 'lt', '2024-03-15'), false],
    ['lte date vs date', leaf('signup_day', 'lte', '2024-03-15'), true],
    ['date op on a number attribute', leaf('age', 'gt', '2024-01-01'), false],
    ['date op on a non-date string', leaf('country', 'lt', '2024-01-01'), false],
    ['number op on a date string', leaf('signup', 'gt', 0), false],
    ['contains substring', leaf('email', 'contains', '@example.'), true],
    ['contains is case-sensitive', leaf('email', 'contains', 'EXAMPLE'), false],
    ['contains on a list attribute is membership', leaf('tags', 'contains', 'staff'), true],
    ['contains on a list attribute is not substring', leaf('tags', 'contains', 'sta'), false],
    ['contains on a number', leaf('age', 'contains', '3'), false],
    ['starts_with', leaf('email', 'starts_with', 'ada@'), true],
    ['starts_with miss', leaf('email', 'starts_with', 'bob'), false],
    ['ends_with', leaf('email', 'ends_with', '.com'), true],
    ['ends_with miss', leaf('email', 'ends_with', '.org'), false],
    ['ends_with on a list', leaf('tags', 'ends_with', 'ff'), false],
    ['exists true', leaf('country', 'exists', true), true],
    ['exists true on falsy value', leaf('score', 'exists', true), true],
    ['exists false on present', leaf('country', 'exists', false), false],
    ['semver_gt compares numerically, not as text', leaf('app_version', 'semver_gt', '2.9.0'), true],
    ['semver_gt equal', leaf('app_version', 'semver_gt', '2.10.0'), false],
    ['semver_lt', leaf('app_version', 'semver_lt', '2.10.1'), true],
    ['semver_lt with v prefix in value', leaf('app_version', 'semver_lt', 'v3.0.0'), true],
    ['semver on invalid attribute', leaf('country', 'semver_gt', '1.0.0'), false],
    ['regex search is unanchored', leaf('email', 'regex', 'example\\.com'), true],
    ['regex anchored', leaf('email', 'regex', '^bob'), false],
    ['regex inline flag', leaf('email', 'regex', '(?i)^ADA@'), true],
    ['regex on a number', leaf('age', 'regex', '3'), false],
  ] as const)('%s', (_name, node, expected) => {
    expect(check(node)).toBe(expected);
  });

  it('orders prerelease versions per semver (1.0.0-beta < 1.0.0)', () => {
    expect(check(leaf('v', 'semver_lt', '1.0.0'), { v: '1.0.0-beta.2' })).toBe(true);
    expect(check(leaf('v', 'semver_gt', '1.0.0-beta.2'), { v: '1.0.0-beta.10' })).toBe(true);
  });

  it('keeps regex linear-time: a catastrophic-backtracking pattern returns quickly', () => {
    const started = performance.now();
    const result = check(leaf('s', 'regex', '^(a+)+$'), { s: `${'a'.repeat(5000)}!` });
    expect(result).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('treats a pattern that does not compile as no match instead of throwing', () => {
    expect(check(leaf('email', 'regex', '(a'))).toBe(false);
    expect(check(leaf('email', 'regex', '(?<=a)b'))).toBe(false);
  });
});

describe('evaluateAudience: missing attributes', () => {
  const missingCases: [AudienceLeaf['op'], AudienceLeaf['value'], boolean][] = [
    ['eq', 'x', false],
    ['neq', 'x', true],
    ['in', ['x'], false],
    ['not_in', ['x'], true],
    ['gt', 1, false],
    ['gte', 1, false],
    ['lt', 1, false],
    ['lte', 1, false],
    ['contains', 'x', false],
    ['starts_with', 'x', false],
    ['ends_with', 'x', false],
    ['exists', true, false],
    ['exists', false, true],
    ['semver_gt', '1.0.0', false],
    ['semver_lt', '1.0.0', false],
    ['regex', '.*', false],
  ];

  it.each(missingCases)('%s %j on a missing attribute is %s', (op, value, expected) => {
    expect(check(leaf('absent', op, value))).toBe(expected);
    // JSON null behaves exactly like an absent key.
    expect(check(leaf('nothing', op, value))).toBe(expected);
    // So does a dot path that stops early.
    expect(check(leaf('country.code', op, value))).toBe(expected);
  });
});

describe('evaluateAudience: attribute paths', () => {
  it('follows dot paths into nested objects', () => {
    expect(check(leaf('user.plan', 'eq', 'team'))).toBe(true);
    expect(check(leaf('user.org.id', 'eq', 'org_1'))).toBe(true);
    expect(check(leaf('user.org.missing', 'exists', false))).toBe(true);
  });

  it('indexes arrays with numeric segments', () => {
    expect(check(leaf('user.devices.1', 'eq', 'web'))).toBe(true);
    expect(check(leaf('user.devices.2', 'exists', false))).toBe(true);
    expect(check(leaf('user.devices.first', 'exists', false))).toBe(true);
  });

  it('never resolves inherited properties such as constructor or __proto__', () => {
    expect(check(leaf('constructor', 'exists', true))).toBe(false);
    expect(check(leaf('__proto__', 'exists', true))).toBe(false);
    expect(check(leaf('user.toString', 'exists', true))).toBe(false);
    expect(check(leaf('tags.length', 'exists', true))).toBe(false);
  });

  it('cannot address a literal key that contains a dot', () => {
    expect(check(leaf('app.version', 'exists', true), { 'app.version': '1.0.0' })).toBe(false);
  });
});

describe('evaluateAudience: compound nodes', () => {
  const de = leaf('country', 'eq', 'DE');
  const us = leaf('country', 'eq', 'US');
  const pro = leaf('plan', 'eq', 'pro');

  it('and / or / not', () => {
    expect(check({ operator: 'and', operands: [de, pro] })).toBe(true);
    expect(check({ operator: 'and', operands: [de, us] })).toBe(false);
    expect(check({ operator: 'or', operands: [us, de] })).toBe(true);
    expect(check({ operator: 'or', operands: [us] })).toBe(false);
    expect(check({ operator: 'not', operands: [us] })).toBe(true);
    expect(check({ operator: 'not', operands: [de] })).toBe(false);
  });

  it('not over a missing attribute is the complement of the leaf', () => {
    expect(check({ operator: 'not', operands: [leaf('absent', 'eq', 'x')] })).toBe(true);
  });

  it('nests', () => {
    const tree: AudienceExpression = {
      operator: 'and',
      operands: [
        { operator: 'or', operands: [us, { operator: 'and', operands: [de, leaf('age', 'gte', 18)] }] },
        { operator: 'not', operands: [leaf('email', 'ends_with', '@competitor.com')] },
        leaf('app_version', 'semver_gt', '2.0.0'),
      ],
    };
    expect(check(tree)).toBe(true);
    expect(check(tree, { ...context, age: 17 })).toBe(false);
  });

  it('treats a null audience as everyone', () => {
    expect(evaluateAudience(null, {})).toBe(true);
    expect(evaluateAudience(undefined, {})).toBe(true);
    expect(evaluateAudience(null, undefined)).toBe(true);
  });

  it('treats a missing context as an empty one', () => {
    expect(evaluateAudience(leaf('country', 'neq', 'US'), undefined)).toBe(true);
    expect(evaluateAudience(leaf('country', 'eq', 'US'), undefined)).toBe(false);
  });

  it('evaluates malformed nodes to false instead of throwing', () => {
    const bad = [
      { operator: 'xor', operands: [de] },
      { operator: 'and', operands: [] },
      { operator: 'not', operands: [] },
      { attribute: 'country', op: 'like', value: 'DE' },
      { attribute: 5, op: 'eq', value: 'DE' },
    ] as unknown as AudienceExpression[];
    for (const node of bad) {
      expect(check(node)).toBe(false);
    }
  });
});

describe('evaluateAudience: segments', () => {
  const segments: Record<string, AudienceExpression | null> = {
    germany: leaf('country', 'eq', 'DE'),
    pros: leaf('plan', 'eq', 'pro'),
    german_pros: { operator: 'and', operands: [{ segment: 'germany' }, { segment: 'pros' }] },
    everyone: null,
    loop_a: { operator: 'or', operands: [{ segment: 'loop_b' }, leaf('country', 'eq', 'DE')] },
    loop_b: { segment: 'loop_a' },
    self: { operator: 'or', operands: [{ segment: 'self' }] },
  };
  const resolve: SegmentResolver = (key) => segments[key];

  it('resolves segments, including segments inside segments', () => {
    expect(evaluateAudience({ segment: 'germany' }, context, resolve)).toBe(true);
    expect(evaluateAudience({ segment: 'german_pros' }, context, resolve)).toBe(true);
    expect(evaluateAudience({ segment: 'german_pros' }, { ...context, plan: 'free' }, resolve)).toBe(false);
  });

  it('treats an unknown segment as false (and so its negation as true)', () => {
    expect(evaluateAudience({ segment: 'nope' }, context, resolve)).toBe(false);
    expect(evaluateAudience({ segment: 'germany' }, context)).toBe(false);
    expect(evaluateAudience({ operator: 'not', operands: [{ segment: 'nope' }] }, context, resolve)).toBe(true);
  });

  it('treats a segment without a rule as everyone', () => {
    expect(evaluateAudience({ segment: 'everyone' }, {}, resolve)).toBe(true);
  });

  it('breaks cycles: the reference that closes the loop is false', () => {
    expect(evaluateAudience({ segment: 'self' }, context, resolve)).toBe(false);
    // loop_a -> loop_b -> loop_a (false), then loop_a's own condition decides.
    expect(evaluateAudience({ segment: 'loop_a' }, context, resolve)).toBe(true);
    expect(evaluateAudience({ segment: 'loop_a' }, { country: 'US' }, resolve)).toBe(false);
  });

  it('stops following chains deeper than maxSegmentNesting', () => {
    const chain: SegmentResolver = (key) => {
      const level = Number(key.slice(1));
      return level >= 20 ? leaf('country', 'eq', 'DE') : { segment: `s${level + 1}` };
    };
    const limit = AUDIENCE_LIMITS.maxSegmentNesting;
    expect(evaluateAudience({ segment: `s${20 - limit + 1}` }, context, chain)).toBe(true);
    expect(evaluateAudience({ segment: `s${20 - limit}` }, context, chain)).toBe(false);
  });

  it('evaluates a segment shared by many branches once per call', () => {
    let calls = 0;
    const counting: SegmentResolver = (key) => {
      calls += 1;
      return segments[key];
    };
    const tree: AudienceExpression = {
      operator: 'and',
      operands: Array.from({ length: 50 }, () => ({ segment: 'germany' })),
    };
    expect(evaluateAudience(tree, context, counting)).toBe(true);
    expect(calls).toBe(1);
  });
});

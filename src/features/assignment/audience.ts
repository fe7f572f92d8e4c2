/**
 * Audience evaluation. Public entry point of the audience rules: types, limits and validation are
 * re-exported here so callers import from one module.
 */
import semver from 'semver';

import { AUDIENCE_LIMITS } from './audience-types.js';
import type { AudienceExpression, AudienceLeaf, AudienceOp, SegmentResolver } from './audience-types.js';
import { compileRegex, isScalar, parseIsoInstant, readAttribute, toComparableNumber, validSemver } from './audience-values.js';

export * from './audience-types.js';
export { validateAudience } from './audience-validate.js';

interface EvaluationEnv {
  context: Record<string, unknown>;
  resolveSegment: SegmentResolver;
  /** Segment keys being expanded right now, outermost first. */
  stack: string[];
  /** Segment results within one evaluation, so a segment used N times is evaluated once. */
  memo: Map<string, boolean>;
}

const noSegments: SegmentResolver = () => undefined;

/**
 * Whether `context` belongs to the audience. `null`/`undefined` audience = everyone; a missing
 * context is an empty one (so only `exists: false`, `neq` and `not_in` leaves can hold).
 * Never throws on malformed input: a node it cannot understand evaluates to false.
 */
export function evaluateAudience(
  tree: AudienceExpression | null | undefined,
  context: Record<string, unknown> | undefined,
  resolveSegment: SegmentResolver = noSegments,
): boolean {
  if (tree === null || tree === undefined) {
    return true;
  }
  return evaluateNode(tree, { context: context ?? {}, resolveSegment, stack: [], memo: new Map() });
}

function evaluateNode(node: AudienceExpression, env: EvaluationEnv): boolean {
  if (typeof node !== 'object' || node === null) {
    return false;
  }
  if ('operator' in node) {
    const operands = Array.isArray(node.operands) ? node.operands : [];
    switch (node.operator) {
      case 'and':
        return operands.length > 0 && operands.every((operand) => evaluateNode(operand, env));
      case 'or':
        return operands.some((operand) => evaluateNode(operand, env));
      case 'not':
        return operands.length === 1 && operands[0] !== undefined && !evaluateNode(operands[0], env);
      default:
        return false;
    }
  }
  if ('segment' in node) {
    return evaluateSegment(node.segment, env);
  }
  return evaluateLeaf(node, env.context);
}

/**
 * Cycles and chains deeper than maxSegmentNesting evaluate to false instead of overflowing the
 * stack; saving such segments should be refused (findSegmentReferenceProblem).
 */
function evaluateSegment(key: string, env: EvaluationEnv): boolean {
  const memoised = env.memo.get(key);
  if (memoised !== undefined) {
    return memoised;
  }
  if (env.stack.includes(key) || env.stack.length >= AUDIENCE_LIMITS.maxSegmentNesting) {
    return false;
  }
  const tree = env.resolveSegment(key);
  if (tree === undefined) {
    return false;
  }
  env.stack.push(key);
  const result = tree === null ? true : evaluateNode(tree, env);
  env.stack.pop();
  env.memo.set(key, result);
  return result;
}

function evaluateLeaf(leaf: AudienceLeaf, context: Record<string, unknown>): boolean {
  if (typeof leaf.attribute !== 'string' || !Object.hasOwn(LEAF_EVALUATORS, leaf.op)) {
    return false;
  }
  const actual = readAttribute(context, leaf.attribute);
  // JSON null and an absent key mean the same thing to every op.
  const missing = actual === undefined || actual === null;
  if (leaf.op === 'exists') {
    return leaf.value === !missing;
  }
  if (missing) {
    // Mirrors GrowthBook ($ne / $nin) and Unleash (NOT_IN): "not equal to X" holds for a unit
    // that has no value at all.
    return leaf.op === 'neq' || leaf.op === 'not_in';
  }
  return LEAF_EVALUATORS[leaf.op](actual, leaf.value);
}

type LeafEvaluator = (actual: unknown, expected: AudienceLeaf['value']) => boolean;

function equals(actual: unknown, expected: unknown): boolean {
  return isScalar(actual) && actual === expected;
}

/** A list attribute matches when any of its elements is in the list (GrowthBook's `$in`). */
function inList(actual: unknown, expected: AudienceLeaf['value']): boolean {
  if (!Array.isArray(expected)) {
    return false;
  }
  const candidates: unknown[] = Array.isArray(actual) ? actual : [actual];
  return candidates.some((candidate) => expected.some((item) => equals(candidate, item)));
}

/** Sign of actual - expected, or undefined when the two cannot be ordered. */
function compareOrdered(actual: unknown, expected: AudienceLeaf['value']): number | undefined {
  let left: number | undefined;
  let right: number | undefined;
  if (typeof expected === 'number') {
    left = toComparableNumber(actual);
    right = expected;
  } else if (typeof expected === 'string') {
    left = parseIsoInstant(actual);
    right = parseIsoInstant(expected);
  }
  if (left === undefined || right === undefined) {
    return undefined;
  }
  return Math.sign(left - right);
}

function ordered(test: (sign: number) => boolean): LeafEvaluator {
  return (actual, expected) => {
    const sign = compareOrdered(actual, expected);
    return sign !== undefined && test(sign);
  };
}

function stringTest(test: (actual: string, expected: string) => boolean): LeafEvaluator {
  return (actual, expected) => typeof actual === 'string' && typeof expected === 'string' && test(actual, expected);
}

function semverTest(test: (actual: string, expected: string) => boolean): LeafEvaluator {
  return (actual, expected) => {
    const left = validSemver(actual);
    const right = validSemver(expected);
    return left !== null && right !== null && test(left, right);
  };
}

/** Substring for a string attribute; membership for a list attribute (`tags contains "beta"`). */
const contains: LeafEvaluator = (actual, expected) => {
  if (Array.isArray(actual)) {
    return actual.some((item) => equals(item, expected));
  }
  return typeof actual === 'string' && typeof expected === 'string' && actual.includes(expected);
};

const LEAF_EVALUATORS: Record<AudienceOp, LeafEvaluator> = {
  eq: (actual, expected) => equals(actual, expected),
  neq: (actual, expected) => !equals(actual, expected),
  in: inList,
  not_in: (actual, expected) => Array.isArray(expected) && !inList(actual, expected),
  gt: ordered((sign) => sign > 0),
  gte: ordered((sign) => sign >= 0),
  lt: ordered((sign) => sign < 0),
  lte: ordered((sign) => sign <= 0),
  contains,
  starts_with: stringTest((actual, expected) => actual.startsWith(expected)),
  ends_with: stringTest((actual, expected) => actual.endsWith(expected)),
  exists: () => false, // handled before dispatch: it is the one op that looks at missing values
  semver_gt: semverTest((actual, expected) => semver.gt(actual, expected)),
  semver_lt: semverTest((actual, expected) => semver.lt(actual, expected)),
  regex: stringTest((actual, pattern) => compileRegex(pattern)?.test(actual) ?? false),
};

/** Distinct segment keys referenced directly by the tree, in order of first appearance. */
export function collectSegmentKeys(tree: AudienceExpression | null | undefined): string[] {
  const keys = new Set<string>();
  const visit = (node: AudienceExpression | null | undefined): void => {
    if (typeof node !== 'object' || node === null) {
      return;
    }
    if ('segment' in node && typeof node.segment === 'string') {
      keys.add(node.segment);
    } else if ('operator' in node && Array.isArray(node.operands)) {
      node.operands.forEach(visit);
    }
  };
  visit(tree);
  return [...keys];
}

export interface SegmentReferenceProblem {
  kind: 'cycle' | 'too_deep' | 'unknown_segment';
  /** Chain of segment keys from the root to the offending reference, inclusive. */
  path: string[];
}

/**
 * First problem in the segment reference graph reachable from `rootKey` (depth-first, operands in
 * order), or null. Meant for the segment service before saving: resolve `rootKey` to the rule
 * being saved and other keys to stored rules.
 */
export function findSegmentReferenceProblem(rootKey: string, resolveSegment: SegmentResolver): SegmentReferenceProblem | null {
  // Shortest path length at which a key's whole subgraph was checked clean; a later visit at the
  // same or a greater length cannot find anything new, which keeps shared segments linear.
  const cleanAt = new Map<string, number>();
  const walk = (path: string[]): SegmentReferenceProblem | null => {
    const key = path[path.length - 1] ?? '';
    if (path.indexOf(key) !== path.length - 1) {
      return { kind: 'cycle', path };
    }
    if (path.length > AUDIENCE_LIMITS.maxSegmentNesting) {
      return { kind: 'too_deep', path };
    }
    if ((cleanAt.get(key) ?? Infinity) <= path.length) {
      return null;
    }
    const tree = resolveSegment(key);
    if (tree === undefined) {
      return { kind: 'unknown_segment', path };
    }
    for (const child of collectSegmentKeys(tree)) {
      const problem = walk([...path, child]);
      if (problem !== null) {
        return problem;
      }
    }
    cleanAt.set(key, path.length);
    return null;
  };
  return walk([rootKey]);
}

import { AUDIENCE_LIMITS, AUDIENCE_OPERATORS, AUDIENCE_OPS, SEGMENT_KEY_PATTERN } from './audience-types.js';
import type { AudienceIssue, AudienceOp } from './audience-types.js';
import { isScalar, parseIsoInstant, regexCompileError, toComparableNumber, validSemver } from './audience-values.js';

interface ValidationState {
  issues: AudienceIssue[];
  nodes: number;
  nodeLimitReported: boolean;
}

type PlainObject = Record<string, unknown>;

const COMPOUND_KEYS = ['operator', 'operands'];
const LEAF_KEYS = ['attribute', 'op', 'value'];
const SEGMENT_KEYS = ['segment'];
const NODE_SHAPES = 'a compound {operator, operands}, a condition {attribute, op, value} or a segment reference {segment}';

/** RFC 6901 escaping, for property names echoed back in pointers. */
function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function quote(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : (JSON.stringify(value) ?? String(value));
}

function report(state: ValidationState, pointer: string, message: string): void {
  if (state.issues.length < AUDIENCE_LIMITS.maxIssues) {
    state.issues.push({ pointer, message });
  }
}

function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function reportUnknownKeys(state: ValidationState, node: PlainObject, pointer: string, allowed: string[], kind: string): void {
  for (const key of Object.keys(node)) {
    if (!allowed.includes(key)) {
      report(state, `${pointer}/${escapePointerToken(key)}`, `unknown property '${key}' on a ${kind}; allowed: ${allowed.join(', ')}`);
    }
  }
}

/**
 * Structural validation of an audience tree. Returns every problem found (up to
 * AUDIENCE_LIMITS.maxIssues); an empty list means the tree is valid. `null` is valid and means
 * "everyone". Segment references are checked for shape only; whether they exist is the caller's
 * business (see collectSegmentKeys).
 */
export function validateAudience(tree: unknown): AudienceIssue[] {
  const state: ValidationState = { issues: [], nodes: 0, nodeLimitReported: false };
  if (tree !== null) {
    validateNode(state, tree, '', 1);
  }
  return state.issues;
}

function validateNode(state: ValidationState, node: unknown, pointer: string, depth: number): void {
  state.nodes += 1;
  if (state.nodes > AUDIENCE_LIMITS.maxNodes) {
    if (!state.nodeLimitReported) {
      state.nodeLimitReported = true;
      report(state, pointer, `audience has more than ${AUDIENCE_LIMITS.maxNodes} nodes`);
    }
    return;
  }
  if (depth > AUDIENCE_LIMITS.maxDepth) {
    report(state, pointer, `audience is nested deeper than ${AUDIENCE_LIMITS.maxDepth} levels`);
    return;
  }
  if (!isPlainObject(node)) {
    report(state, pointer, `must be an object: ${NODE_SHAPES}`);
    return;
  }
  if ('operator' in node || 'operands' in node) {
    validateCompound(state, node, pointer, depth);
  } else if ('segment' in node) {
    validateSegmentRef(state, node, pointer);
  } else if ('attribute' in node || 'op' in node || 'value' in node) {
    validateLeaf(state, node, pointer);
  } else {
    report(state, pointer, `must be ${NODE_SHAPES}`);
  }
}

function validateCompound(state: ValidationState, node: PlainObject, pointer: string, depth: number): void {
  reportUnknownKeys(state, node, pointer, COMPOUND_KEYS, 'compound node');
  const { operator, operands } = node;
  if (operator === undefined) {
    report(state, `${pointer}/operator`, `operator is required: one of ${AUDIENCE_OPERATORS.join(', ')}`);
  } else if (!(AUDIENCE_OPERATORS as readonly unknown[]).includes(operator)) {
    report(state, `${pointer}/operator`, `unknown operator ${quote(operator)}; expected one of ${AUDIENCE_OPERATORS.join(', ')}`);
  }
  if (operands === undefined) {
    report(state, `${pointer}/operands`, 'operands is required');
    return;
  }
  if (!Array.isArray(operands)) {
    report(state, `${pointer}/operands`, 'operands must be an array');
    return;
  }
  if (operator === 'not' && operands.length !== 1) {
    report(state, `${pointer}/operands`, `'not' takes exactly one operand, got ${operands.length}`);
  } else if (operands.length === 0) {
    report(state, `${pointer}/operands`, 'operands must contain at least one expression');
  }
  operands.forEach((operand: unknown, index) => {
    validateNode(state, operand, `${pointer}/operands/${index}`, depth + 1);
  });
}

function validateSegmentRef(state: ValidationState, node: PlainObject, pointer: string): void {
  reportUnknownKeys(state, node, pointer, SEGMENT_KEYS, 'segment reference');
  const { segment } = node;
  if (typeof segment !== 'string' || !SEGMENT_KEY_PATTERN.test(segment)) {
    report(state, `${pointer}/segment`, `segment must be a segment key matching ${SEGMENT_KEY_PATTERN.source}`);
  }
}

function validateAttribute(state: ValidationState, attribute: unknown, pointer: string): void {
  if (attribute === undefined) {
    report(state, pointer, 'attribute is required');
  } else if (typeof attribute !== 'string' || attribute.length === 0) {
    report(state, pointer, 'attribute must be a non-empty string');
  } else if (attribute.length > AUDIENCE_LIMITS.maxAttributeLength) {
    report(state, pointer, `attribute must be at most ${AUDIENCE_LIMITS.maxAttributeLength} characters`);
  } else if (attribute.split('.').some((part) => part.length === 0)) {
    report(state, pointer, `attribute '${attribute}' has an empty path segment; use dots only between names`);
  }
}

function validateLeaf(state: ValidationState, node: PlainObject, pointer: string): void {
  reportUnknownKeys(state, node, pointer, LEAF_KEYS, 'condition');
  validateAttribute(state, node.attribute, `${pointer}/attribute`);
  const { op } = node;
  if (op === undefined) {
    report(state, `${pointer}/op`, 'op is required');
    return;
  }
  if (!(AUDIENCE_OPS as readonly unknown[]).includes(op)) {
    report(state, `${pointer}/op`, `unknown op ${quote(op)}; expected one of ${AUDIENCE_OPS.join(', ')}`);
    return;
  }
  if (!('value' in node)) {
    report(state, `${pointer}/value`, `value is required for op '${String(op)}'`);
    return;
  }
  const problem = VALUE_CHECKS[op as AudienceOp](node.value);
  if (problem !== undefined) {
    report(state, `${pointer}/value${problem.suffix ?? ''}`, `${problem.message} (op '${String(op)}')`);
  }
}

interface ValueProblem {
  /** Pointer suffix below `/value`, e.g. `/3` for a list element. */
  suffix?: string;
  message: string;
}

type ValueCheck = (value: unknown) => ValueProblem | undefined;

function checkString(value: unknown, what: string): ValueProblem | undefined {
  if (typeof value !== 'string') {
    return { message: `${what} must be a string` };
  }
  if (value.length > AUDIENCE_LIMITS.maxStringLength) {
    return { message: `${what} must be at most ${AUDIENCE_LIMITS.maxStringLength} characters` };
  }
  return undefined;
}

const checkScalar: ValueCheck = (value) => {
  if (!isScalar(value)) {
    return { message: 'value must be a string, number or boolean' };
  }
  return typeof value === 'string' ? checkString(value, 'value') : undefined;
};

const checkList: ValueCheck = (value) => {
  if (!Array.isArray(value)) {
    return { message: 'value must be an array of strings, numbers or booleans' };
  }
  if (value.length === 0 || value.length > AUDIENCE_LIMITS.maxListLength) {
    return { message: `value must contain 1 to ${AUDIENCE_LIMITS.maxListLength} elements` };
  }
  for (let i = 0; i < value.length; i++) {
    const problem = checkScalar(value[i]);
    if (problem !== undefined) {
      return { suffix: `/${i}`, message: `list element ${problem.message.replace(/^value /, '')}` };
    }
  }
  return undefined;
};

const checkOrdered: ValueCheck = (value) => {
  if (typeof value === 'number' && toComparableNumber(value) !== undefined) {
    return undefined;
  }
  if (typeof value === 'string' && parseIsoInstant(value) !== undefined) {
    return undefined;
  }
  return {
    message: 'value must be a number or an ISO 8601 date (YYYY-MM-DD, or a date-time with Z or an offset); use semver_gt/semver_lt for versions',
  };
};

const checkNonEmptyString: ValueCheck = (value) => {
  if (value === '') {
    return { message: 'value must be a non-empty string' };
  }
  return checkString(value, 'value');
};

const checkSemver: ValueCheck = (value) => {
  if (validSemver(value) === null) {
    return { message: `value ${quote(value)} is not a valid semantic version (e.g. 1.4.0 or 2.0.0-beta.1)` };
  }
  return undefined;
};

const checkRegex: ValueCheck = (value) => {
  const problem = checkNonEmptyString(value);
  if (problem !== undefined || typeof value !== 'string') {
    return problem;
  }
  const error = regexCompileError(value);
  return error === undefined ? undefined : { message: `regex does not compile (RE2 syntax): ${error}` };
};

const VALUE_CHECKS: Record<AudienceOp, ValueCheck> = {
  eq: checkScalar,
  neq: checkScalar,
  in: checkList,
  not_in: checkList,
  gt: checkOrdered,
  gte: checkOrdered,
  lt: checkOrdered,
  lte: checkOrdered,
  contains: checkNonEmptyString,
  starts_with: checkNonEmptyString,
  ends_with: checkNonEmptyString,
  exists: (value) => (typeof value === 'boolean' ? undefined : { message: 'value must be a boolean' }),
  semver_gt: checkSemver,
  semver_lt: checkSemver,
  regex: checkRegex,
};

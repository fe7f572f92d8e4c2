// The audience rule format (docs/assignment.md section 3, src/features/assignment/audience-types.ts)
// as the rule builder edits it: the JSON tree itself, so what the builder shows and what the JSON
// view shows are one value and round-trip exactly.

export type Scalar = string | number | boolean;
export interface Compound {
  operator: 'and' | 'or' | 'not';
  operands: Rule[];
}
export interface Condition {
  attribute: string;
  op: Op;
  value: Scalar | Scalar[];
}
export interface SegmentRef {
  segment: string;
}
export type Rule = Compound | Condition | SegmentRef;

/** Every op the rule format supports, with the kind of value it takes. */
export const OPS = {
  eq: { label: 'equals', value: 'scalar' },
  neq: { label: 'does not equal', value: 'scalar' },
  in: { label: 'is one of', value: 'list' },
  not_in: { label: 'is none of', value: 'list' },
  gt: { label: 'is greater than', value: 'ordered' },
  gte: { label: 'is at least', value: 'ordered' },
  lt: { label: 'is less than', value: 'ordered' },
  lte: { label: 'is at most', value: 'ordered' },
  contains: { label: 'contains', value: 'text' },
  starts_with: { label: 'starts with', value: 'text' },
  ends_with: { label: 'ends with', value: 'text' },
  exists: { label: 'exists', value: 'boolean' },
  semver_gt: { label: 'is a version above', value: 'text' },
  semver_lt: { label: 'is a version below', value: 'text' },
  regex: { label: 'matches the pattern (RE2)', value: 'text' },
} as const;
export type Op = keyof typeof OPS;
export const OP_KEYS = Object.keys(OPS) as Op[];

export function isCompound(rule: Rule): rule is Compound {
  return typeof rule === 'object' && rule !== null && 'operator' in rule;
}
export function isSegment(rule: Rule): rule is SegmentRef {
  return typeof rule === 'object' && rule !== null && 'segment' in rule;
}

/** The value an op starts with when a person switches to it (the old one kept when it still fits). */
export function valueFor(op: Op, previous: Scalar | Scalar[]): Scalar | Scalar[] {
  const kind = OPS[op].value;
  const first = Array.isArray(previous) ? previous[0] : previous;
  if (kind === 'list') return Array.isArray(previous) ? previous : first === undefined || first === '' ? [] : [first];
  if (kind === 'boolean') return typeof first === 'boolean' ? first : true;
  if (kind === 'ordered') return typeof first === 'number' ? first : 0;
  if (kind === 'text') return typeof first === 'string' ? first : '';
  return first ?? '';
}

/** Reads a typed list: "DE, AT" → ["DE", "AT"]; typed as numbers or booleans when asked. */
export function parseList(text: string, type: 'string' | 'number' | 'boolean'): Scalar[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item) => (type === 'number' ? Number(item) : type === 'boolean' ? item === 'true' : item));
}

function quoted(value: Scalar): string {
  return typeof value === 'string' ? `“${value}”` : String(value);
}

/** A rule in words, for summaries: "country is one of “DE”, “AT” and not in segment staff". */
export function describeRule(rule: Rule | null, segmentName: (key: string) => string = (key) => key): string {
  if (rule === null) return 'Everyone';
  if (isSegment(rule)) return `in segment ${segmentName(rule.segment)}`;
  if (isCompound(rule)) {
    if (rule.operator === 'not') return `not (${describeRule(rule.operands[0] ?? null, segmentName)})`;
    const parts = rule.operands.map((operand) =>
      isCompound(operand) && operand.operator !== 'not' ? `(${describeRule(operand, segmentName)})` : describeRule(operand, segmentName),
    );
    return parts.join(rule.operator === 'and' ? ' and ' : ' or ');
  }
  const op = OPS[rule.op];
  if (!op) return `${rule.attribute} ${rule.op} ${JSON.stringify(rule.value)}`;
  if (rule.op === 'exists') return `${rule.attribute} ${rule.value === false ? 'is missing' : 'is present'}`;
  const value = Array.isArray(rule.value) ? rule.value.map(quoted).join(', ') : quoted(rule.value);
  return `${rule.attribute} ${op.label} ${value}`;
}

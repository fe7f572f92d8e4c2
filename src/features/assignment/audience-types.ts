/**
 * Audience rule format shared by experiment audiences and saved segments.
 * Semantics are documented in docs/assignment.md; keep the two in step.
 */

export const AUDIENCE_OPERATORS = ['and', 'or', 'not'] as const;
export type AudienceOperator = (typeof AUDIENCE_OPERATORS)[number];

export const AUDIENCE_OPS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'starts_with',
  'ends_with',
  'exists',
  'semver_gt',
  'semver_lt',
  'regex',
] as const;
export type AudienceOp = (typeof AUDIENCE_OPS)[number];

export type AudienceScalar = string | number | boolean;

export interface AudienceCompound {
  operator: AudienceOperator;
  /** `and`/`or`: one or more operands; `not`: exactly one. */
  operands: AudienceExpression[];
}

export interface AudienceLeaf {
  /** Dot path into the assign `context`, e.g. `user.plan`. */
  attribute: string;
  op: AudienceOp;
  /** Type depends on `op`; `validateAudience` enforces it. */
  value: AudienceScalar | AudienceScalar[];
}

export interface AudienceSegmentRef {
  segment: string;
}

export type AudienceExpression = AudienceCompound | AudienceLeaf | AudienceSegmentRef;

/** One validation problem; `pointer` is a JSON Pointer (RFC 6901) relative to the audience root. */
export interface AudienceIssue {
  pointer: string;
  message: string;
}

/**
 * `undefined` means "no such segment" (evaluates false); `null` means the segment exists with no
 * rule, which matches everyone, like an experiment whose audience is null.
 */
export type SegmentResolver = (key: string) => AudienceExpression | null | undefined;

export const AUDIENCE_LIMITS = {
  /** Nodes on the longest root-to-leaf path; a lone leaf has depth 1. */
  maxDepth: 10,
  /** Compound, leaf and segment nodes together. */
  maxNodes: 200,
  /** Elements of an `in`/`not_in` list; larger lists belong in a segment or a unit-level flag. */
  maxListLength: 1000,
  /** Characters of any string value, including regex patterns. */
  maxStringLength: 1024,
  maxAttributeLength: 256,
  /** Segment references followed in a chain (segment inside segment ...); deeper ones are false. */
  maxSegmentNesting: 5,
  /** Validation stops collecting after this many issues to bound the 422 body. */
  maxIssues: 50,
} as const;

/** Same shape as every other key in the API (experiment, metric, event keys). */
export const SEGMENT_KEY_PATTERN = /^[a-z0-9._-]{1,128}$/;

import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';
import { SEGMENT_KEY_PATTERN } from '../assignment/audience.js';

// The rule is checked by validateAudience, whose pointers and messages are far more precise than
// what a JSON Schema of the recursive tree could report; the schema only documents it.
const Rule = Type.Unknown({
  description: 'AudienceExpression or null (everyone): {operator: and|or|not, operands} | {attribute, op, value} | {segment: key}; see docs/assignment.md',
});
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()]);

export const SegmentSchema = Type.Object(
  {
    id: Id,
    workspace_id: Id,
    key: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    rule: Rule,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'A reusable audience filter; audiences refer to it as {"segment": key}' },
);

export const SegmentInput = Type.Object(
  {
    key: Type.String({ pattern: SEGMENT_KEY_PATTERN.source, description: 'unique in the workspace; audiences refer to the segment by it' }),
    name: Name,
    description: Type.Optional(Description),
    rule: Rule,
  },
  { additionalProperties: false },
);
export type SegmentInput = Static<typeof SegmentInput>;

export const SegmentPatch = Type.Object(
  {
    key: Type.Optional(Type.String({ description: 'cannot change: audiences refer to the segment by key; accepted when unchanged' })),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    rule: Type.Optional(Rule),
  },
  { additionalProperties: false },
);
export type SegmentPatch = Static<typeof SegmentPatch>;

export const SegmentList = ListOf(SegmentSchema, 'segments of the workspace, oldest first');
export const SegmentListQuery = Type.Object(PageQuery, { additionalProperties: false });
export const SegmentParams = Type.Object({ id: Type.String() });

import Type, { type TSchema } from 'typebox';
import { ULID_PATTERN } from '../lib/ids.js';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
// One schema with a type list rather than anyOf: the response serializer then writes it directly
// instead of running a validator to pick the branch on every response.
export const NullableTimestamp = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, or null',
});
/** Every id Verdict issues is a ULID in its canonical form (Crockford base 32, upper case). */
export const ID_PATTERN = ULID_PATTERN.source;
export const ID_MESSAGE = 'must be an id: a ULID of 26 characters 0-9 and A-Z without I, L, O, U (e.g. 01JBZ5Q3M4N8V2W6X7Y9Z0ABCD)';
/**
 * An id, in answers and wherever a body refers to a record: an empty or malformed one is refused
 * by validation (422 naming the field) before any lookup, so it never reaches a foreign key.
 */
export const Id = Type.String({ pattern: ID_PATTERN, description: 'ULID' });

export const FieldErrorSchema = Type.Object(
  {
    pointer: Type.Optional(Type.String({ description: 'JSON Pointer into the request body' })),
    parameter: Type.Optional(Type.String({ description: 'query or path parameter' })),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri-reference' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
    error_id: Type.Optional(Type.String({ description: 'present on 500: the id logged with the error' })),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'page size' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'opaque cursor from next_cursor' })),
};

export function ListOf<T extends TSchema>(item: T, description: string) {
  return Type.Object({ data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()]) }, { description });
}

export const EmptyBody = Type.Null({ description: 'no content' });

/** Documents a problem answer of a route (the error handler serializes it). */
export function problemDoc(description: string) {
  return { description, content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } };
}

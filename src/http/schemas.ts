import Type, { type TSchema } from 'typebox';

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
// One schema with a type list rather than anyOf: the response serializer then writes it directly
// instead of running a validator to pick the branch on every response.
export const NullableTimestamp = Type.Unsafe<string | null>({
  type: ['string', 'null'],
  format: 'date-time',
  description: 'ISO 8601 UTC with milliseconds, or null',
});
export const Id = Type.String({ description: 'ULID' });

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

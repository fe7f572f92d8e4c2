import Type, { type Static } from 'typebox';
import { ID_PATTERN, Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

const Format = Type.Enum(['html', 'text', 'markdown', 'pdf'], { description: 'an output format' });
const Status = Type.Enum(['queued', 'running', 'resolved', 'failed'], {
  description: 'queued -> running -> resolved | failed',
});

export const RenderInput = Type.Object(
  {
    template_id: Id,
    version: Type.Optional(
      Type.String({ minLength: 1, maxLength: 32, description: 'a label such as v3; default: the latest version. Unknown labels answer 404.' }),
    ),
    formats: Type.Array(Format, { minItems: 1, maxItems: 4, uniqueItems: true }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: "merge values; must satisfy the version's fields_schema" }),
  },
  { additionalProperties: false },
);
export type RenderInput = Static<typeof RenderInput>;

export const RenderOutputSchema = Type.Object({
  format: Format,
  content_type: Type.String(),
  bytes: Type.Integer({ description: 'size of the output in bytes' }),
  url: Type.String({ description: 'where to fetch it (same API key)' }),
});

export const RenderSchema = Type.Object(
  {
    id: Id,
    template_id: Id,
    version: Type.String({ description: 'the label the render pinned' }),
    formats: Type.Array(Format),
    status: Status,
    outputs: Type.Array(RenderOutputSchema, { description: 'one per format once resolved; empty before' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'why it failed, when status is failed' }),
    created_at: Timestamp,
    resolved_at: Type.Union([Timestamp, Type.Null()], { description: 'when it became resolved or failed' }),
  },
  { description: 'A request to render a pinned template version; poll it until resolved or failed' },
);

export const RenderParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const OutputParams = Type.Object({ id: Type.String({ maxLength: 64 }), format: Format });

export const RenderListQuery = Type.Object(
  {
    ...PageQuery,
    template_id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: 'only renders of this template' })),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
);
export type RenderListQuery = Static<typeof RenderListQuery>;

export const RenderList = ListOf(RenderSchema, 'renders of the workspace, newest first');

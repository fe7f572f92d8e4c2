import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

/** Bodies are documents, not data: 200k characters is a long contract, with room to spare. */
export const MAX_BODY_LENGTH = 200_000;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Body = Type.String({
  maxLength: MAX_BODY_LENGTH,
  description: 'Markdown with Handlebars merge fields; checked when saved (syntax, known helpers, inline partials)',
});
const Label = Type.String({ pattern: '^v[1-9][0-9]*$', description: 'v1, v2, ... in freeze order' });

export const TemplateSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    body: Type.String({ description: 'the mutable draft' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    latest_version: Type.Union([Label, Type.Null()], { description: 'label of the newest frozen version, or null' }),
  },
  { description: 'A mutable draft; freeze it to get an immutable, labelled version' },
);

export const TemplateInput = Type.Object({ name: Name, body: Body }, { additionalProperties: false });
export type TemplateInput = Static<typeof TemplateInput>;

export const TemplatePatch = Type.Object(
  { name: Type.Optional(Name), body: Type.Optional(Body) },
  { additionalProperties: false, minProperties: 1, description: 'send name, body or both' },
);
export type TemplatePatch = Static<typeof TemplatePatch>;

export const FieldsSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: 'JSON Schema (2020-12) of the merge data, discovered from the body when it was frozen',
});

export const TemplateVersionSchema = Type.Object(
  {
    template_id: Id,
    label: Label,
    body_snapshot: Type.String({ description: 'the body as it was when frozen; never changes' }),
    fields_schema: FieldsSchema,
    created_at: Timestamp,
  },
  { description: 'An immutable, frozen copy of a template body' },
);

export const TemplateList = ListOf(TemplateSchema, 'templates of the workspace (deleted ones excluded), oldest first');
export const TemplateVersionList = ListOf(TemplateVersionSchema, 'versions of the template, v1 first');
export const TemplateListQuery = Type.Object(PageQuery, { additionalProperties: false });
export const TemplateParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export const VersionParams = Type.Object({ id: Type.String({ maxLength: 64 }), label: Type.String({ maxLength: 32 }) });

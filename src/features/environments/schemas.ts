import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const EnvironmentSchema = Type.Object(
  { id: Id, workspace_id: Id, name: Type.String(), slug: Type.String(), created_at: Timestamp },
  { description: 'A deployment stage inside a workspace (production, staging, ...)' },
);

export const EnvironmentInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    slug: Type.String({
      pattern: '^[a-z0-9-]{1,32}$',
      description: 'lowercase letters, digits and dashes; appears in API keys bound to it. "all" is reserved.',
    }),
  },
  { additionalProperties: false },
);
export type EnvironmentInput = Static<typeof EnvironmentInput>;

export const EnvironmentList = ListOf(EnvironmentSchema, 'environments of the workspace, oldest first');
export const EnvironmentListQuery = Type.Object(PageQuery, { additionalProperties: false });

import Type from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';

export const WorkspaceSchema = Type.Object(
  { id: Id, name: Type.String(), slug: Type.String(), created_at: Timestamp },
  { description: 'The tenant: every resource belongs to exactly one workspace' },
);

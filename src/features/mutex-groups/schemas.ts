import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const MutexGroupSchema = Type.Object(
  {
    id: Id,
    key: Type.String(),
    name: Type.String(),
    experiment_count: Type.Integer({ description: 'experiments in the group that are not archived' }),
    created_at: Timestamp,
  },
  { description: 'A set of mutually exclusive experiments: a unit enters at most one of them' },
);

export const MutexGroupInput = Type.Object(
  { key: Type.String({ pattern: '^[a-z0-9._-]{1,128}$' }), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export type MutexGroupInput = Static<typeof MutexGroupInput>;

export const MutexGroupList = ListOf(MutexGroupSchema, 'mutex groups, oldest first');
export const MutexGroupListQuery = Type.Object(PageQuery, { additionalProperties: false });
export const MutexGroupParams = Type.Object({ id: Type.String() });

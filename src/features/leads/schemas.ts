import Type, { type Static } from 'typebox';
import { Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const DEFAULT_LEAD_STATUS = 'new';

const LEAD_STATUS_DESCRIPTION = 'free text chosen by the workspace (for example new, contacted, won); task-tool statuses map onto it';
export const LeadStatus = Type.String({ minLength: 1, maxLength: 64, description: LEAD_STATUS_DESCRIPTION });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Email = Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()]);
const TaskId = Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()], {
  description: 'the id of the task in the task-management tool; unique in the workspace; null when not linked',
});

export const LeadSchema = Type.Object(
  {
    id: Id,
    name: Type.String(),
    email: Type.Union([Type.String(), Type.Null()]),
    status: Type.String(),
    task_tool_task_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'A local record whose status mirrors a task of the task-management tool' },
);

export const LeadInput = Type.Object(
  {
    name: Name,
    email: Type.Optional(Email),
    status: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: DEFAULT_LEAD_STATUS, description: LEAD_STATUS_DESCRIPTION })),
    task_tool_task_id: Type.Optional(TaskId),
  },
  { additionalProperties: false },
);
export type LeadInput = Static<typeof LeadInput>;

export const LeadPatch = Type.Object(
  { name: Type.Optional(Name), email: Type.Optional(Email), status: Type.Optional(LeadStatus), task_tool_task_id: Type.Optional(TaskId) },
  { additionalProperties: false },
);
export type LeadPatch = Static<typeof LeadPatch>;

export const LeadParams = Type.Object({ id: Type.String() });
export const LeadList = ListOf(LeadSchema, 'leads of the workspace, oldest first');
export const LeadListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Type.String({ maxLength: 64, description: 'only leads with this status' })),
    task_tool_task_id: Type.Optional(Type.String({ maxLength: 256, description: 'only the lead linked to this task' })),
  },
  { additionalProperties: false },
);
export type LeadListQuery = Static<typeof LeadListQuery>;

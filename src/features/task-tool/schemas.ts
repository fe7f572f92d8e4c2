import Type, { type Static } from 'typebox';
import { Timestamp } from '../../http/schemas.js';

export const MAX_MAPPING_ENTRIES = 200;

const StatusMapping = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 64 }), {
  maxProperties: MAX_MAPPING_ENTRIES,
  propertyNames: { minLength: 1, maxLength: 100 },
  description: 'task-tool status name -> lead status. Names are compared case-insensitively, so two names differing only in case are refused.',
});

export const TaskToolSettingsSchema = Type.Object(
  {
    status_mapping: StatusMapping,
    previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'after a rotation of the workspace webhook secret, until when the previous one still verifies',
    }),
    updated_at: Type.Union([Timestamp, Type.Null()], { description: 'null until the settings are first saved' }),
  },
  { description: 'How task-tool callbacks are mirrored onto leads' },
);

export const TaskToolSettingsInput = Type.Object({ status_mapping: StatusMapping }, { additionalProperties: false });
export type TaskToolSettingsInput = Static<typeof TaskToolSettingsInput>;

export const RotatedWebhookSecret = Type.Object(
  {
    webhook_secret: Type.String({ description: 'the new workspace webhook secret (signs X-Signature); returned only now' }),
    previous_secret_expires_at: Timestamp,
  },
  { description: 'The previous secret keeps verifying until previous_secret_expires_at (24 hours)' },
);

export const TaskToolCallbackParams = Type.Object({ workspace_id: Type.String({ description: 'the workspace id (ULID)' }) });

export const TaskToolCallbackHeaders = Type.Object({
  'x-signature': Type.Optional(Type.String({ description: 'hex HMAC-SHA256 of the raw body keyed with the workspace webhook_secret' })),
});

const StatusObject = Type.Object(
  {
    status: Type.Union([Type.String(), Type.Null()]),
    color: Type.Optional(Type.String()),
    orderindex: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
    type: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const TaskToolCallbackBody = Type.Object(
  {
    event: Type.String({ description: 'taskStatusUpdated, taskUpdated or taskDeleted; other events are acknowledged and ignored' }),
    task_id: Type.String({ minLength: 1, maxLength: 256 }),
    webhook_id: Type.Optional(Type.String()),
    history_items: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.Union([Type.String(), Type.Integer()]),
            field: Type.Optional(Type.String({ description: 'status items are mirrored; others are ignored' })),
            date: Type.Optional(Type.String({ description: 'milliseconds since the epoch, as a string' })),
            before: Type.Optional(Type.Union([StatusObject, Type.Null(), Type.Unknown()])),
            after: Type.Optional(Type.Union([StatusObject, Type.Null(), Type.Unknown()])),
          },
          { additionalProperties: true },
        ),
        { description: 'absent on taskDeleted' },
      ),
    ),
  },
  { additionalProperties: true, description: 'A ClickUp-shaped webhook callback' },
);

export const TaskToolCallbackAck = Type.Object(
  {
    received: Type.Boolean(),
    ignored: Type.Optional(Type.Boolean({ description: 'true for an event type that is not mirrored' })),
  },
  { description: 'The callback is verified and its MirrorTaskStatusJob durably enqueued' },
);

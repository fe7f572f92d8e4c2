import Type from 'typebox';
import { ID_PATTERN, Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const AuditEntrySchema = Type.Object(
  {
    id: Id,
    action: Type.String({ description: 'what happened, e.g. api_key.created' }),
    target_type: Type.String(),
    target_id: Type.String(),
    actor_id: Type.Union([Type.String(), Type.Null()], { description: 'the API key that acted; null for the CLI' }),
    payload: Type.Record(Type.String(), Type.Unknown(), { description: 'what changed; never secrets' }),
    created_at: Timestamp,
  },
  { description: 'one recorded mutation or peek' },
);

export const AuditQuery = Type.Object(
  {
    ...PageQuery,
    // An empty filter is refused (400 naming it) rather than read as absent: `?target_id=` from a
    // form left blank would otherwise list every entry, unlike `?actor_id=`.
    action: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    target_type: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    target_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    actor_id: Type.Optional(
      Type.String({ pattern: ID_PATTERN, description: 'only what this API key did (its id, as in actor_id); a key of another workspace matches nothing' }),
    ),
    actor_type: Type.Optional(
      Type.Enum(['api_key', 'system'], {
        description: 'api_key: what any API key did (the API and the admin UI); system: what had no key behind it (the CLI, background jobs)',
      }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'entries created at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'entries created before' })),
  },
  { additionalProperties: false },
);

export const AuditList = ListOf(AuditEntrySchema, 'audit entries, newest first');

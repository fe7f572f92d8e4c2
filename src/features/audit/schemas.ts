import Type from 'typebox';
import { ID_PATTERN, Id, ListOf, PageQuery, Timestamp } from '../../http/schemas.js';

export const AuditEntrySchema = Type.Object(
  {
    id: Id,
    action: Type.String({ description: 'what happened, e.g. api_key.created' }),
    target_type: Type.String(),
    target_id: Type.String(),
    actor_id: Type.Union([Type.String(), Type.Null()], { description: 'the API key or the person that acted; null for the CLI and background jobs' }),
    actor: Type.Object(
      {
        type: Type.Enum(['user', 'api_key', 'system'], {
          description:
            'user: a person through their admin UI session; api_key: a key (the API, or the UI signed in with a key); system: the CLI and background jobs',
        }),
        id: Type.Union([Type.String(), Type.Null()]),
        name: Type.Union([Type.String(), Type.Null()], { description: "the person's name (their email before they gave one) or the key's name" }),
        email: Type.Union([Type.String(), Type.Null()], { description: "a person's email address" }),
      },
      { description: 'who acted, by name' },
    ),
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
      Type.String({
        pattern: ID_PATTERN,
        description: 'only what this API key or person did (its id, as in actor_id); one of another workspace matches nothing',
      }),
    ),
    actor_type: Type.Optional(
      Type.Enum(['api_key', 'user', 'system'], {
        description:
          'api_key: what any API key did (the API, and the admin UI signed in with a key); user: what any person did; system: what had no key or person behind it (the CLI, background jobs)',
      }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'entries created at or after' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'entries created before' })),
  },
  { additionalProperties: false },
);

export const AuditList = ListOf(AuditEntrySchema, 'audit entries, newest first');

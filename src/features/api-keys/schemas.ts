import Type, { type Static } from 'typebox';
import { Id, ListOf, NullableTimestamp, PageQuery, Timestamp } from '../../http/schemas.js';

const KeyKind = Type.Union([Type.Literal('server'), Type.Literal('client')], {
  description: 'server keys may call everything; client keys only assign, events, exposures and OFREP',
});

const apiKeyFields = {
  id: Id,
  workspace_id: Id,
  environment_id: Type.Union([Id, Type.Null()], { description: 'the environment the key is bound to, or null' }),
  name: Type.String(),
  kind: KeyKind,
  prefix: Type.String({ description: 'vd_{srv|clt}_{env}' }),
  last_four: Type.String(),
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
};

export const ApiKeySchema = Type.Object(apiKeyFields, { description: 'An API key; the secret is never shown again' });
export const ApiKeyWithSecretSchema = Type.Object(
  { ...apiKeyFields, key: Type.String({ description: 'the full key: shown once, store it now' }) },
  { description: 'A new API key with its secret' },
);

export const ApiKeyInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    kind: KeyKind,
    environment_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'bind the key to one environment' })),
  },
  { additionalProperties: false },
);
export type ApiKeyInput = Static<typeof ApiKeyInput>;

export const ApiKeyListQuery = Type.Object(
  { ...PageQuery, include_revoked: Type.Optional(Type.Boolean({ default: false, description: 'also list revoked keys' })) },
  { additionalProperties: false },
);
export const ApiKeyList = ListOf(ApiKeySchema, 'API keys of the workspace, oldest first');
export const ApiKeyParams = Type.Object({ id: Type.String() });

import Type from 'typebox';
import { Id, Timestamp } from '../../http/schemas.js';
import { LINK_TOKEN_PATTERN } from './links.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';
import { ROLES } from './roles.js';

export const RoleSchema = Type.Enum([...ROLES], {
  description:
    'viewer: reads (results peeks are audited); editor: experiments, metrics, segments, templates, share links; admin: everything, people and keys included',
});

const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Password = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters; stored as an scrypt hash only`,
});

export const UserSchema = Type.Object(
  {
    id: Id,
    email: Type.String(),
    name: Type.Union([Type.String(), Type.Null()], { description: 'null until the invitation is accepted' }),
    role: RoleSchema,
    status: Type.Enum(['invited', 'active', 'disabled'], { description: 'invited: the invitation is not accepted yet' }),
    single_sign_on: Type.Boolean({ description: 'the account was made by single sign-on (OpenID Connect)' }),
    created_at: Timestamp,
  },
  { description: 'a person who signs in to the admin UI of this workspace' },
);

export const UserList = Type.Object({ data: Type.Array(UserSchema) });

export const UserInput = Type.Object({ email: Email, role: RoleSchema, name: Type.Optional(Name) }, { additionalProperties: false });

export const UserPatch = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    disabled: Type.Optional(Type.Boolean({ description: 'true ends the person’s sessions and refuses their sign-ins' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const UserParams = Type.Object({ id: Id });

export const Invitation = Type.Object({
  user: UserSchema,
  invite_url: Type.String({ description: 'the one-time link (shown once): the token is its last path segment' }),
  expires_at: Timestamp,
});

export const PasswordReset = Type.Object({
  user: UserSchema,
  reset_url: Type.String({ description: 'the one-time link (shown once) that sets a new password' }),
  expires_at: Timestamp,
});

export const SessionsEnded = Type.Object({ sessions_ended: Type.Integer({ minimum: 0 }) });

export const LinkParams = Type.Object({ token: Type.String({ pattern: LINK_TOKEN_PATTERN, description: 'the last path segment of the link' }) });

export const AcceptInvitation = Type.Object({ name: Name, password: Password }, { additionalProperties: false });
export const AcceptPasswordReset = Type.Object({ password: Password }, { additionalProperties: false });
export const AcceptedUser = Type.Object({ user: UserSchema });

export const PasswordSignInInput = Type.Object(
  {
    email: Email,
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH }),
    workspace: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'id or slug, when the address has accounts in several workspaces' })),
  },
  { additionalProperties: false },
);

import type { Role } from '../../features/people/roles.js';

/** A person who signs in to the admin UI of one workspace. */
export interface UsersTable {
  id: string;
  workspace_id: string;
  /** Lower-cased. */
  email: string;
  /** Null until the invitation is accepted (or the identity provider names them). */
  name: string | null;
  role: Role;
  /** `scrypt$N$r$p$salt$hash` (people/passwords.ts); null until a password is set, or for single sign-on only. */
  password_hash: string | null;
  /** The identity provider's `sub` for accounts made by single sign-on. */
  oidc_subject: string | null;
  created_at: number;
  updated_at: number;
  disabled_at: number | null;
}

/** A one-time link: an invitation (sets name and password) or a password reset. */
export interface UserLinksTable {
  id: string;
  /** SHA-256 (hex) of the token in the link. */
  token_hash: string;
  user_id: string;
  workspace_id: string;
  purpose: 'invitation' | 'password_reset';
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** One signed-in browser of a person; deleted on sign-out, all of a person's on "sign out everywhere". */
export interface UserSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  workspace_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface SignInFailuresTable {
  throttle_key: string;
  failures: number;
  window_started_at: number;
}

export interface ShareLinksTable {
  id: string;
  workspace_id: string;
  experiment_id: string;
  token_hash: string;
  /** The actor (API key or user id) that created the link. */
  created_by: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface PeopleTables {
  users: UsersTable;
  user_links: UserLinksTable;
  user_sessions: UserSessionsTable;
  sign_in_failures: SignInFailuresTable;
  share_links: ShareLinksTable;
}

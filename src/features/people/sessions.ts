import { problems, problemForStatus } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import type { Principal } from '../api-keys/authenticator.js';
import { recordAudit } from '../audit/recorder.js';
import { findWorkspace } from '../workspaces/read.js';
import type { PeopleDeps } from './deps.js';
import { randomToken, tokenHash } from './links.js';
import { verifyAgainstDecoy, verifyPassword } from './passwords.js';
import { clearFailures, recordFailure, refuseWhenThrottled, throttleKeys } from './throttle.js';
import { normalizeEmail, personName, toUserView, type UserView } from './users.js';
import {
  deleteExpiredUserSessions,
  deleteSessionsOfUser,
  deleteUserSession,
  findUserSessionByTokenHash,
  findUsersByEmail,
  insertUserSession,
  type UserRow,
  type UserSessionWithUser,
} from './store.js';

/** The same absolute lifetime as a key's session (sessions/service.ts). */
export const USER_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface UserSessionView {
  signed_in: true;
  csrf_token: string;
  expires_at: string;
  key: null;
  user: UserView;
  role: UserView['role'];
  workspace: { id: string; name: string; slug: string };
}

export type UserSessionLookup = { state: 'none' } | { state: 'expired' | 'revoked' | 'active'; session: UserSessionWithUser };

export interface PasswordSignIn {
  email: string;
  password: string;
  /** Narrows to one workspace when the address has accounts in several (its id or slug). */
  workspace?: string | undefined;
}

const REFUSED = 'the email address or the password is wrong';

async function matchingAccount(ctx: PeopleDeps, input: PasswordSignIn, email: string): Promise<UserRow | null> {
  const candidates = (await findUsersByEmail(ctx.db, email)).filter((user) => user.disabled_at === null && user.password_hash !== null);
  const narrowed = input.workspace === undefined ? candidates : await filterByWorkspace(ctx, candidates, input.workspace);
  for (const user of narrowed) if (await verifyPassword(input.password, user.password_hash as string)) return user;
  if (narrowed.length === 0) await verifyAgainstDecoy(input.password);
  return null;
}

async function filterByWorkspace(ctx: PeopleDeps, users: UserRow[], workspace: string): Promise<UserRow[]> {
  const kept: UserRow[] = [];
  for (const user of users) {
    const found = await findWorkspace(ctx.db, user.workspace_id);
    if (found && (found.id === workspace || found.slug === workspace)) kept.push(user);
  }
  return kept;
}

/**
 * POST /ui/session {email, password}. Every refusal says the same thing and takes about as long,
 * whether the address has no account, is disabled or the password is wrong. A fresh token is
 * always issued (never one the browser brought), which is what defeats session fixation.
 */
export async function signInWithPassword(ctx: PeopleDeps, input: PasswordSignIn, ip: string): Promise<{ token: string; view: UserSessionView }> {
  const email = normalizeEmail(input.email);
  const keys = throttleKeys(email, ip);
  const now = ctx.clock.now();
  await refuseWhenThrottled(ctx.db, keys, now);
  const user = await matchingAccount(ctx, input, email);
  if (!user) {
    await recordFailure(ctx.db, keys, now);
    throw problems.unauthorized(REFUSED);
  }
  await clearFailures(ctx.db, keys);
  return startUserSession(ctx, user, 'password');
}

/** A new session for a person who proved who they are (password, invitation, single sign-on). */
export async function startUserSession(
  ctx: PeopleDeps,
  user: UserRow,
  method: 'password' | 'invitation' | 'oidc',
): Promise<{ token: string; view: UserSessionView }> {
  const token = randomToken();
  const now = ctx.clock.now();
  const row = {
    id: newId(),
    token_hash: tokenHash(token),
    user_id: user.id,
    workspace_id: user.workspace_id,
    csrf_token: randomToken(),
    created_at: now,
    expires_at: now + USER_SESSION_TTL_MS,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await deleteExpiredUserSessions(trx, now);
    await insertUserSession(trx, row);
    await recordAudit(trx, {
      workspaceId: user.workspace_id,
      actorId: user.id,
      action: 'session.signed_in',
      targetType: 'session',
      targetId: row.id,
      payload: { method, expires_at: toIso(row.expires_at) },
      at: now,
    });
  });
  return { token, view: await userSessionView(ctx, { ...row, user }) };
}

export async function lookupUserSession(ctx: PeopleDeps, token: string): Promise<UserSessionLookup> {
  const session = await findUserSessionByTokenHash(ctx.db, tokenHash(token));
  if (!session) return { state: 'none' };
  if (session.user.disabled_at !== null) return { state: 'revoked', session };
  if (session.expires_at <= ctx.clock.now()) return { state: 'expired', session };
  return { state: 'active', session };
}

export async function userSessionView(ctx: PeopleDeps, session: UserSessionWithUser): Promise<UserSessionView> {
  const workspace = await findWorkspace(ctx.db, session.workspace_id);
  if (!workspace) throw problems.unauthorized('the workspace of this session no longer exists');
  const user = toUserView(session.user);
  return {
    signed_in: true,
    csrf_token: session.csrf_token,
    expires_at: toIso(session.expires_at),
    key: null,
    user,
    role: user.role,
    workspace: { id: workspace.id, name: workspace.name, slug: workspace.slug },
  };
}

/** Signs one browser out, or (everywhere) every session of the person. */
export async function signOutUser(ctx: PeopleDeps, session: UserSessionWithUser, everywhere: boolean): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const ended = everywhere ? await deleteSessionsOfUser(trx, session.user_id) : Number(await deleteUserSession(trx, session.id));
    if (ended === 0) return;
    await recordAudit(trx, {
      workspaceId: session.workspace_id,
      actorId: session.user_id,
      action: everywhere ? 'user.signed_out_everywhere' : 'session.signed_out',
      targetType: everywhere ? 'user' : 'session',
      targetId: everywhere ? session.user_id : session.id,
      payload: everywhere ? { sessions_ended: ended } : {},
      at: ctx.clock.now(),
    });
  });
}

/** The person as the rest of the server sees them: a principal that acts with the person's id and role. */
export function principalOfUserSession(session: UserSessionWithUser): Principal {
  const user = session.user;
  return {
    keyId: user.id,
    workspaceId: user.workspace_id,
    environmentId: null,
    kind: 'server',
    via: 'session',
    user: { id: user.id, email: user.email, name: personName(user), role: user.role },
  };
}

export function refuseDisabled(user: UserRow): void {
  if (user.disabled_at !== null) throw problemForStatus(403, `${user.email} is disabled`);
}

/** What the sessions slice asks of people (the people slice gives it, index.ts). */
export interface PeopleSessions {
  signIn: (input: Parameters<typeof signInWithPassword>[1], ip: string) => ReturnType<typeof signInWithPassword>;
  lookup: (token: string) => ReturnType<typeof lookupUserSession>;
  view: (session: Parameters<typeof userSessionView>[1]) => ReturnType<typeof userSessionView>;
  signOut: (session: Parameters<typeof signOutUser>[1], everywhere: boolean) => Promise<void>;
  principalOf: typeof principalOfUserSession;
  /** Whether single sign-on (OpenID Connect) is configured. */
  ssoEnabled: boolean;
}

import crypto from 'node:crypto';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { sha256Hex } from '../../lib/secrets.js';
import { toIso } from '../../lib/time.js';
import type { Principal } from '../api-keys/authenticator.js';
import { recordAudit } from '../audit/recorder.js';
import { findWorkspace } from '../workspaces/read.js';
import type { UserSessionView } from '../people/sessions.js';
import type { SessionsDeps } from './deps.js';
import { deleteExpiredSessions, deleteSession, findSessionByTokenHash, insertSession, type SessionWithKey } from './store.js';

/** Absolute lifetime: a session never outlives 12 hours, however busy (docs/ui.md "Session design"). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** What the UI learns about its session: enough to show who is signed in, and the CSRF token. */
export interface SessionView {
  signed_in: true;
  csrf_token: string;
  expires_at: string;
  key: { id: string; name: string; prefix: string; last_four: string };
  /** Null for a key's session: the key is not a person (people/sessions.ts has a person's view). */
  user: null;
  /** A key's session may do all its key may. */
  role: 'admin';
  workspace: { id: string; name: string; slug: string };
}

export type SessionLookup = { state: 'none' } | { state: 'expired' | 'revoked' | 'active'; session: SessionWithKey };

/** A session of either kind, as the auth hook and the /ui/session routes handle it. */
export type AnySessionLookup =
  | { state: 'none' }
  | {
      state: 'expired' | 'revoked' | 'active';
      session: { csrf_token: string };
      principal: Principal;
      view: () => Promise<SessionView | UserSessionView>;
      signOut: (everywhere: boolean) => Promise<void>;
    };

/** The cookie's token names a key's session or a person's (people/sessions.ts); one lookup finds either. */
export async function lookupAnySession(ctx: SessionsDeps, token: string): Promise<AnySessionLookup> {
  const keyed = await lookupSession(ctx, token);
  if (keyed.state !== 'none') {
    const session = keyed.session;
    return { state: keyed.state, session, principal: principalOfSession(session), view: () => viewOf(ctx, session), signOut: () => signOut(ctx, session) };
  }
  const personal = await ctx.people.lookup(token);
  if (personal.state === 'none') return personal;
  const session = personal.session;
  return {
    state: personal.state,
    session,
    principal: ctx.people.principalOf(session),
    view: () => ctx.people.view(session),
    signOut: (everywhere) => ctx.people.signOut(session, everywhere),
  };
}

function randomToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/**
 * Exchanges a pasted server key for a session. The key is checked by the same authenticator as
 * bearer requests, so malformed, unknown and revoked keys are refused with the same 401s; a
 * client key is refused too, because the UI's pages are server-key operations.
 */
export async function signIn(ctx: SessionsDeps, key: string): Promise<{ token: string; view: SessionView }> {
  if (!ctx.config.uiKeySignIn) {
    throw problems.forbidden(
      'signing in with a server key is turned off on this server (VERDICT_UI_KEY_SIGN_IN=0); sign in with your email address and password',
    );
  }
  const principal = await ctx.authenticator.authenticate(`Bearer ${key.trim()}`);
  if (principal.kind !== 'server') {
    throw problems.unauthorized('a client key cannot sign in to the admin UI; paste a server key (vd_srv_...)');
  }
  const token = randomToken();
  const now = ctx.clock.now();
  const id = newId();
  const row = {
    id,
    token_hash: sha256Hex(token),
    key_id: principal.keyId,
    workspace_id: principal.workspaceId,
    csrf_token: randomToken(),
    created_at: now,
    expires_at: now + SESSION_TTL_MS,
  };
  await ctx.db.transaction().execute(async (trx) => {
    await deleteExpiredSessions(trx, now);
    await insertSession(trx, row);
    await recordAudit(trx, {
      workspaceId: principal.workspaceId,
      actorId: principal.keyId,
      action: 'session.signed_in',
      targetType: 'session',
      targetId: id,
      payload: { expires_at: toIso(row.expires_at) },
      at: now,
    });
  });
  const found = await lookupSession(ctx, token);
  if (found.state !== 'active') throw new Error('a session just created is not active');
  return { token, view: await viewOf(ctx, found.session) };
}

/** Finds the session a cookie token names and says whether it may still act. */
export async function lookupSession(ctx: SessionsDeps, token: string): Promise<SessionLookup> {
  const session = await findSessionByTokenHash(ctx.db, sha256Hex(token));
  if (!session) return { state: 'none' };
  if (session.revoked_at !== null) return { state: 'revoked', session };
  if (session.expires_at <= ctx.clock.now()) return { state: 'expired', session };
  return { state: 'active', session };
}

export async function signOut(ctx: SessionsDeps, session: SessionWithKey): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    if (!(await deleteSession(trx, session.id))) return;
    await recordAudit(trx, {
      workspaceId: session.workspace_id,
      actorId: session.key_id,
      action: 'session.signed_out',
      targetType: 'session',
      targetId: session.id,
      payload: {},
      at: ctx.clock.now(),
    });
  });
}

export function principalOfSession(session: SessionWithKey): Principal {
  return {
    keyId: session.key_id,
    workspaceId: session.workspace_id,
    environmentId: session.environment_id,
    kind: session.kind,
    via: 'session',
  };
}

export async function viewOf(ctx: SessionsDeps, session: SessionWithKey): Promise<SessionView> {
  const workspace = await findWorkspace(ctx.db, session.workspace_id);
  if (!workspace) throw problems.unauthorized('the workspace of this session no longer exists');
  return {
    signed_in: true,
    csrf_token: session.csrf_token,
    expires_at: toIso(session.expires_at),
    key: { id: session.key_id, name: session.key_name, prefix: session.prefix, last_four: session.last_four },
    user: null,
    role: 'admin',
    workspace: { id: workspace.id, name: workspace.name, slug: workspace.slug },
  };
}

import type { JWTPayload } from 'jose';
import type { OidcConfig } from '../../config.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { PeopleDeps } from './deps.js';
import type { Role } from './roles.js';
import { startUserSession } from './sessions.js';
import { findUserByEmail, findUserBySubject, insertUser, updateUser, type UserRow } from './store.js';
import { normalizeEmail } from './users.js';

const RANKED: Role[] = ['admin', 'editor', 'viewer'];

/** The highest role the claim names (a string or a list of strings), else the default. */
export function roleFromClaims(config: OidcConfig, claims: JWTPayload): Role | null {
  const raw = claims[config.roleClaim];
  const values = Array.isArray(raw) ? raw.filter((value): value is string => typeof value === 'string') : typeof raw === 'string' ? [raw] : [];
  return RANKED.find((role) => config.roleValues[role].some((value) => values.includes(value))) ?? config.defaultRole;
}

interface Identity {
  subject: string;
  email: string;
  name: string | null;
  role: Role;
}

function identityOf(config: OidcConfig, claims: JWTPayload): Identity {
  const email = typeof claims.email === 'string' ? normalizeEmail(claims.email) : '';
  if (!claims.sub || !email) throw problems.unauthorized('single sign-on failed: the id_token carries no subject or email address');
  // An address the provider has not verified could be anyone's: it may not take over an account.
  if (claims.email_verified === false) throw problems.unauthorized('single sign-on failed: the provider has not verified this email address');
  const role = roleFromClaims(config, claims);
  if (!role) throw problems.forbidden(`single sign-on: ${email} has no Verdict role at the identity provider (claim ${config.roleClaim})`);
  return { subject: claims.sub, email, name: typeof claims.name === 'string' ? claims.name : null, role };
}

/**
 * Just-in-time accounts: the person signed in by the provider is found by subject, else by email
 * (the account an admin invited gets linked), else created; the role follows the provider's claim
 * at every sign-in. A disabled account stays disabled.
 */
async function accountFor(ctx: PeopleDeps, config: OidcConfig, identity: Identity): Promise<UserRow> {
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const found = (await findUserBySubject(trx, config.workspaceId, identity.subject)) ?? (await findUserByEmail(trx, config.workspaceId, identity.email));
    if (found?.disabled_at != null) throw problems.forbidden(`${identity.email} is disabled in this workspace`);
    if (found) {
      const changes = { oidc_subject: identity.subject, role: identity.role, name: found.name ?? identity.name, updated_at: now };
      await updateUser(trx, found.id, changes);
      if (found.role !== identity.role) {
        const payload = { role: identity.role, from: found.role, via: 'oidc' };
        await recordAudit(trx, {
          workspaceId: found.workspace_id,
          actorId: null,
          action: 'user.updated',
          targetType: 'user',
          targetId: found.id,
          payload,
          at: now,
        });
      }
      return { ...found, ...changes };
    }
    const row: UserRow = {
      id: newId(),
      workspace_id: config.workspaceId,
      email: identity.email,
      name: identity.name,
      role: identity.role,
      password_hash: null,
      oidc_subject: identity.subject,
      created_at: now,
      updated_at: now,
      disabled_at: null,
    };
    await insertUser(trx, row);
    await recordAudit(trx, {
      workspaceId: row.workspace_id,
      actorId: null,
      action: 'user.created',
      targetType: 'user',
      targetId: row.id,
      payload: { email: row.email, role: row.role, via: 'oidc' },
      at: now,
    });
    return row;
  });
}

export async function signInWithClaims(ctx: PeopleDeps, config: OidcConfig, claims: JWTPayload) {
  const user = await accountFor(ctx, config, identityOf(config, claims));
  return startUserSession(ctx, user, 'oidc');
}

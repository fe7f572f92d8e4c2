import { uniqueViolationAs } from '../../db/dialect.js';
import type { Executor } from '../../db/database.js';
import { problems, problemForStatus } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { recordAudit } from '../audit/recorder.js';
import type { PeopleDeps } from './deps.js';
import { INVITATION_TTL_MS, linkToken, linkUrl, PASSWORD_RESET_TTL_MS, tokenHash } from './links.js';
import type { Role } from './roles.js';
import { countActiveAdmins, deleteSessionsOfUser, expireLinks, findUser, insertLink, insertUser, listUsers, updateUser, type UserRow } from './store.js';

export interface UserView {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  status: 'invited' | 'active' | 'disabled';
  single_sign_on: boolean;
  created_at: string;
}

export function toUserView(row: UserRow): UserView {
  const status = row.disabled_at !== null ? 'disabled' : row.password_hash === null && row.oidc_subject === null ? 'invited' : 'active';
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status,
    single_sign_on: row.oidc_subject !== null,
    created_at: toIso(row.created_at),
  };
}

/** The person as audit entries and texts name them. */
export function personName(row: Pick<UserRow, 'name' | 'email'>): string {
  return row.name ?? row.email;
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

async function issueLink(trx: Executor, user: UserRow, purpose: 'invitation' | 'password_reset', now: number, base: string) {
  const token = linkToken(purpose === 'invitation' ? 'inv' : 'rst');
  const expiresAt = now + (purpose === 'invitation' ? INVITATION_TTL_MS : PASSWORD_RESET_TTL_MS);
  await expireLinks(trx, user.id, purpose, now);
  await insertLink(trx, {
    id: newId(),
    token_hash: tokenHash(token),
    user_id: user.id,
    workspace_id: user.workspace_id,
    purpose,
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
  });
  return { url: linkUrl(base, purpose, token), expires_at: toIso(expiresAt) };
}

export interface InviteInput {
  email: string;
  role: Role;
  name?: string | undefined;
}

/** POST /v1/users and `verdict users invite`: the account and its one-time invitation link (shown once). */
export async function inviteUser(ctx: PeopleDeps, workspaceId: string, actorId: string | null, input: InviteInput, base: string) {
  const now = ctx.clock.now();
  const row: UserRow = {
    id: newId(),
    workspace_id: workspaceId,
    email: normalizeEmail(input.email),
    name: input.name ?? null,
    role: input.role,
    password_hash: null,
    oidc_subject: null,
    created_at: now,
    updated_at: now,
    disabled_at: null,
  };
  const taken = () => problemForStatus(409, `${row.email} already has an account in this workspace; issue a password reset link instead`);
  return uniqueViolationAs(
    ctx.seam,
    () =>
      ctx.db.transaction().execute(async (trx) => {
        await insertUser(trx, row);
        const link = await issueLink(trx, row, 'invitation', now, base);
        await recordAudit(trx, {
          workspaceId,
          actorId,
          action: 'user.invited',
          targetType: 'user',
          targetId: row.id,
          payload: { email: row.email, role: row.role },
          at: now,
        });
        return { user: toUserView(row), invite_url: link.url, expires_at: link.expires_at };
      }),
    taken,
  );
}

export async function listWorkspaceUsers(ctx: PeopleDeps, workspaceId: string) {
  return { data: (await listUsers(ctx.db, workspaceId)).map(toUserView) };
}

async function userOf(executor: Executor, workspaceId: string, id: string): Promise<UserRow> {
  const user = await findUser(executor, workspaceId, id);
  if (!user) throw problems.notFound(`user ${id} does not exist in this workspace`);
  return user;
}

/** The last active admin stays one: otherwise nobody could manage the workspace's people. */
async function keepAnAdmin(trx: Executor, user: UserRow, changes: { role?: Role | undefined; disabled?: boolean | undefined }): Promise<void> {
  const losesAdmin =
    user.role === 'admin' && user.disabled_at === null && ((changes.role !== undefined && changes.role !== 'admin') || changes.disabled === true);
  if (losesAdmin && (await countActiveAdmins(trx, user.workspace_id)) <= 1) {
    throw problemForStatus(409, `${user.email} is the workspace's last active admin; make another person admin first`);
  }
}

/** PATCH /v1/users/{id}: role and disabled. Disabling (or any role change) ends the person's sessions. */
export async function patchUser(
  ctx: PeopleDeps,
  workspaceId: string,
  actorId: string,
  id: string,
  changes: { role?: Role | undefined; disabled?: boolean | undefined },
) {
  return ctx.db.transaction().execute(async (trx) => {
    const user = await userOf(trx, workspaceId, id);
    await keepAnAdmin(trx, user, changes);
    const now = ctx.clock.now();
    const update: Partial<UserRow> = { updated_at: now };
    if (changes.role !== undefined) update.role = changes.role;
    if (changes.disabled !== undefined) update.disabled_at = changes.disabled ? (user.disabled_at ?? now) : null;
    await updateUser(trx, id, update);
    const signedOut = await deleteSessionsOfUser(trx, id);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'user.updated',
      targetType: 'user',
      targetId: id,
      payload: { ...changes, sessions_ended: signedOut },
      at: now,
    });
    return toUserView({ ...user, ...update });
  });
}

/** POST /v1/users/{id}/password-reset: a one-time link (shown once) that sets a new password. */
export async function issuePasswordReset(ctx: PeopleDeps, workspaceId: string, actorId: string, id: string, base: string) {
  return ctx.db.transaction().execute(async (trx) => {
    const user = await userOf(trx, workspaceId, id);
    if (user.disabled_at !== null) throw problemForStatus(409, `${user.email} is disabled; enable the account first`);
    const now = ctx.clock.now();
    const link = await issueLink(trx, user, 'password_reset', now, base);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'user.password_reset_issued',
      targetType: 'user',
      targetId: id,
      payload: { expires_at: link.expires_at },
      at: now,
    });
    return { user: toUserView(user), reset_url: link.url, expires_at: link.expires_at };
  });
}

/** POST /v1/users/{id}/sign-out: ends every session of one person (an admin's "sign out everywhere"). */
export async function endSessionsOf(ctx: PeopleDeps, workspaceId: string, actorId: string, id: string): Promise<number> {
  return ctx.db.transaction().execute(async (trx) => {
    await userOf(trx, workspaceId, id);
    const ended = await deleteSessionsOfUser(trx, id);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'user.signed_out_everywhere',
      targetType: 'user',
      targetId: id,
      payload: { sessions_ended: ended },
      at: ctx.clock.now(),
    });
    return ended;
  });
}

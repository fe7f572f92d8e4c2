import { problems, problemForStatus } from '../../http/problems.js';
import { recordAudit } from '../audit/recorder.js';
import type { PeopleDeps } from './deps.js';
import { tokenHash } from './links.js';
import { hashPassword } from './passwords.js';
import { deleteSessionsOfUser, findLinkByTokenHash, findUser, updateUser, useLink, type UserLinkRow } from './store.js';
import { toUserView, type UserView } from './users.js';

const WORD = { invitation: 'invitation', password_reset: 'password reset link' } as const;

async function liveLink(ctx: PeopleDeps, token: string, purpose: UserLinkRow['purpose']): Promise<UserLinkRow> {
  const link = await findLinkByTokenHash(ctx.db, tokenHash(token));
  if (!link || link.purpose !== purpose) throw problems.notFound(`this ${WORD[purpose]} does not exist`);
  if (link.used_at !== null) throw problemForStatus(410, `this ${WORD[purpose]} was already used or replaced by a newer one; ask an admin for a new one`);
  if (link.expires_at <= ctx.clock.now()) throw problemForStatus(410, `this ${WORD[purpose]} has expired; ask an admin for a new one`);
  return link;
}

/**
 * POST /v1/invitations/{token}/accept and /v1/password-resets/{token}/accept: sets the password
 * (and, for an invitation, the name), uses the link up, and ends every session the person had
 * (a reset is often the answer to a password someone else may know).
 */
export async function acceptLink(
  ctx: PeopleDeps,
  token: string,
  purpose: UserLinkRow['purpose'],
  input: { name?: string | undefined; password: string },
): Promise<UserView> {
  const link = await liveLink(ctx, token, purpose);
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    if (!(await useLink(trx, link.id, now))) throw problemForStatus(410, `this ${WORD[purpose]} was already used; ask an admin for a new one`);
    const user = await findUser(trx, link.workspace_id, link.user_id);
    if (!user || user.disabled_at !== null) throw problemForStatus(410, `the account of this ${WORD[purpose]} is disabled`);
    const changes = { password_hash: passwordHash, updated_at: now, ...(input.name !== undefined ? { name: input.name.trim() } : {}) };
    await updateUser(trx, user.id, changes);
    const ended = await deleteSessionsOfUser(trx, user.id);
    await recordAudit(trx, {
      workspaceId: user.workspace_id,
      actorId: user.id,
      action: purpose === 'invitation' ? 'user.invitation_accepted' : 'user.password_reset',
      targetType: 'user',
      targetId: user.id,
      payload: purpose === 'invitation' ? { name: changes.name ?? user.name } : { sessions_ended: ended },
      at: now,
    });
    return toUserView({ ...user, ...changes });
  });
}

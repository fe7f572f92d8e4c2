import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { UserLinksTable, UserSessionsTable, UsersTable } from '../../db/tables/people.js';

export type UserRow = Selectable<UsersTable>;
export type UserLinkRow = Selectable<UserLinksTable>;
export type UserSessionRow = Selectable<UserSessionsTable>;

/** A session together with its person, so one query answers "may this browser act, and as what?". */
export interface UserSessionWithUser extends UserSessionRow {
  user: UserRow;
}

export async function insertUser(executor: Executor, row: UserRow): Promise<void> {
  await executor.insertInto('users').values(row).execute();
}

export async function findUser(executor: Executor, workspaceId: string, id: string): Promise<UserRow | undefined> {
  return executor.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(executor: Executor, workspaceId: string, email: string): Promise<UserRow | undefined> {
  return executor.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('email', '=', email).executeTakeFirst();
}

/** Every account an address has (one per workspace), oldest first. */
export async function findUsersByEmail(executor: Executor, email: string): Promise<UserRow[]> {
  return executor.selectFrom('users').selectAll().where('email', '=', email).orderBy('created_at').orderBy('id').limit(20).execute();
}

export async function findUserBySubject(executor: Executor, workspaceId: string, subject: string): Promise<UserRow | undefined> {
  return executor.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).where('oidc_subject', '=', subject).executeTakeFirst();
}

export async function listUsers(executor: Executor, workspaceId: string): Promise<UserRow[]> {
  return executor.selectFrom('users').selectAll().where('workspace_id', '=', workspaceId).orderBy('email').execute();
}

export async function updateUser(executor: Executor, id: string, changes: Partial<Omit<UserRow, 'id' | 'workspace_id'>>): Promise<void> {
  await executor.updateTable('users').set(changes).where('id', '=', id).execute();
}

export async function countActiveAdmins(executor: Executor, workspaceId: string): Promise<number> {
  const row = await executor
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('admins'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'admin')
    .where('disabled_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.admins ?? 0);
}

export async function insertLink(executor: Executor, row: UserLinkRow): Promise<void> {
  await executor.insertInto('user_links').values(row).execute();
}

export async function findLinkByTokenHash(executor: Executor, tokenHash: string): Promise<UserLinkRow | undefined> {
  return executor.selectFrom('user_links').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Marks the link used unless it already was; false when another request used it first. */
export async function useLink(executor: Executor, id: string, at: number): Promise<boolean> {
  const result = await executor.updateTable('user_links').set({ used_at: at }).where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A new link of one purpose replaces the person's earlier unused ones. */
export async function expireLinks(executor: Executor, userId: string, purpose: UserLinkRow['purpose'], at: number): Promise<void> {
  await executor
    .updateTable('user_links')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

export async function insertUserSession(executor: Executor, row: UserSessionRow): Promise<void> {
  await executor.insertInto('user_sessions').values(row).execute();
}

export async function findUserSessionByTokenHash(executor: Executor, tokenHash: string): Promise<UserSessionWithUser | undefined> {
  const session = await executor.selectFrom('user_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  if (!session) return undefined;
  const user = await executor.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  return user ? { ...session, user } : undefined;
}

export async function deleteUserSession(executor: Executor, id: string): Promise<boolean> {
  const result = await executor.deleteFrom('user_sessions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteSessionsOfUser(executor: Executor, userId: string): Promise<number> {
  const result = await executor.deleteFrom('user_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredUserSessions(executor: Executor, now: number): Promise<void> {
  await executor.deleteFrom('user_sessions').where('expires_at', '<=', now).execute();
}

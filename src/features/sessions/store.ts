import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { SessionsTable } from '../../db/tables/sessions.js';

export type SessionRow = Selectable<SessionsTable>;

/** A session together with the key it stands for, so one query answers "may this browser act?". */
export interface SessionWithKey extends SessionRow {
  environment_id: string | null;
  kind: 'server' | 'client';
  revoked_at: number | null;
  key_name: string;
  prefix: string;
  last_four: string;
}

export async function insertSession(executor: Executor, row: SessionRow): Promise<void> {
  await executor.insertInto('sessions').values(row).execute();
}

export async function findSessionByTokenHash(executor: Executor, tokenHash: string): Promise<SessionWithKey | undefined> {
  return executor
    .selectFrom('sessions')
    .innerJoin('api_keys', 'api_keys.id', 'sessions.key_id')
    .select([
      'sessions.id',
      'sessions.token_hash',
      'sessions.key_id',
      'sessions.workspace_id',
      'sessions.csrf_token',
      'sessions.created_at',
      'sessions.expires_at',
      'api_keys.environment_id',
      'api_keys.kind',
      'api_keys.revoked_at',
      'api_keys.name as key_name',
      'api_keys.prefix',
      'api_keys.last_four',
    ])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function deleteSession(executor: Executor, id: string): Promise<boolean> {
  const result = await executor.deleteFrom('sessions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Housekeeping on sign-in: expired rows are useless and would otherwise accumulate. */
export async function deleteExpiredSessions(executor: Executor, now: number): Promise<void> {
  await executor.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

/** The environments slice's read model: what other slices (API keys, experiments) may know of an environment. */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EnvironmentsTable } from '../../db/schema.js';

export type EnvironmentRow = Selectable<EnvironmentsTable>;

export async function findEnvironment(executor: Executor, workspaceId: string, id: string): Promise<EnvironmentRow | undefined> {
  return executor.selectFrom('environments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * The mutex groups slice's read model: a group with the count of experiments in it (non-archived),
 * what the experiments slice checks a reference against.
 */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MutexGroupsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import { countExperimentsInMutexGroups } from '../experiments/read.js';

export type MutexGroupRow = Selectable<MutexGroupsTable>;

function toMutexGroup(row: MutexGroupRow, counts: ReadonlyMap<string, number>) {
  return { id: row.id, key: row.key, name: row.name, experiment_count: counts.get(row.id) ?? 0, created_at: toIso(row.created_at) };
}

export async function findMutexGroup(executor: Executor, workspaceId: string, id: string) {
  const row = await executor.selectFrom('mutex_groups').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return row && toMutexGroup(row, await countExperimentsInMutexGroups(executor, [row.id]));
}

export async function listMutexGroups(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('mutex_groups').selectAll().where('workspace_id', '=', workspaceId);
  const rows = await paginate(query, 'id', page, (row) => row);
  const counts = await countExperimentsInMutexGroups(
    executor,
    rows.data.map((row) => row.id),
  );
  return { ...rows, data: rows.data.map((row) => toMutexGroup(row, counts)) };
}

/**
 * The mutex groups slice's read model: a group with the count of experiments in it (non-archived),
 * what the experiments slice checks a reference against.
 */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MutexGroupsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export type MutexGroupRow = Selectable<MutexGroupsTable>;

function toMutexGroup(row: MutexGroupRow & { experiment_count: number | string }) {
  return { id: row.id, key: row.key, name: row.name, experiment_count: Number(row.experiment_count), created_at: toIso(row.created_at) };
}

function withCounts(executor: Executor, workspaceId: string) {
  return executor
    .selectFrom('mutex_groups')
    .selectAll('mutex_groups')
    .select((eb) =>
      eb
        .selectFrom('experiments')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('experiments.mutex_group_id', '=', 'mutex_groups.id')
        .where('experiments.status', '!=', 'archived')
        .as('experiment_count'),
    )
    .where('mutex_groups.workspace_id', '=', workspaceId);
}

export async function findMutexGroup(executor: Executor, workspaceId: string, id: string) {
  const row = await withCounts(executor, workspaceId).where('mutex_groups.id', '=', id).executeTakeFirst();
  return row && toMutexGroup(row as MutexGroupRow & { experiment_count: number });
}

export async function listMutexGroups(executor: Executor, workspaceId: string, page: PageParams) {
  return paginate(withCounts(executor, workspaceId), 'mutex_groups.id', page, (row) =>
    toMutexGroup(row as MutexGroupRow & { experiment_count: number }),
  );
}

import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { AssignmentSourcesTable } from '../../db/tables/warehouse.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import type { FactColumn } from '../data-sources/schemas.js';
import type { AssignmentSource } from './schemas.js';

export type AssignmentSourceRow = Selectable<AssignmentSourcesTable>;

export function toAssignmentSource(row: AssignmentSourceRow): AssignmentSource {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    data_source_id: row.data_source_id,
    name: row.name,
    sql: row.sql,
    unit_id_column: row.unit_id_column,
    experiment_key_column: row.experiment_key_column,
    variant_key_column: row.variant_key_column,
    timestamp_column: row.timestamp_column,
    columns: JSON.parse(row.columns) as FactColumn[],
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertAssignmentSource(executor: Executor, row: AssignmentSourceRow): Promise<void> {
  await executor.insertInto('assignment_sources').values(row).execute();
}

export async function findAssignmentSource(executor: Executor, workspaceId: string, id: string): Promise<AssignmentSourceRow | undefined> {
  return executor.selectFrom('assignment_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function lockAssignmentSource(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<AssignmentSourceRow | undefined> {
  return seam.forUpdate(executor.selectFrom('assignment_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
}

export async function updateAssignmentSource(executor: Executor, id: string, changes: Updateable<AssignmentSourcesTable>): Promise<void> {
  await executor.updateTable('assignment_sources').set(changes).where('id', '=', id).execute();
}

export async function deleteAssignmentSource(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('assignment_sources').where('id', '=', id).execute();
}

export async function listAssignmentSources(executor: Executor, workspaceId: string, dataSourceId: string | undefined, page: PageParams) {
  let query = executor.selectFrom('assignment_sources').selectAll().where('workspace_id', '=', workspaceId);
  if (dataSourceId !== undefined) query = query.where('data_source_id', '=', dataSourceId);
  return paginate(query, 'id', page, toAssignmentSource);
}

/** Experiments whose exposures the assignment source gives: what stops its deletion. */
export async function experimentsOnAssignmentSource(executor: Executor, workspaceId: string, id: string): Promise<Array<{ id: string; key: string }>> {
  return executor
    .selectFrom('experiments')
    .select(['id', 'key'])
    .where('workspace_id', '=', workspaceId)
    .where('assignment_source_id', '=', id)
    .orderBy('id')
    .execute();
}

import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { DataSourcesTable, FactTablesTable } from '../../db/tables/warehouse.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import type { DataSource, FactColumn, FactTable } from './schemas.js';

export type DataSourceRow = Selectable<DataSourcesTable>;
export type FactTableRow = Selectable<FactTablesTable>;

export function toDataSource(row: DataSourceRow): DataSource {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    kind: row.kind,
    url: row.url_masked,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toFactTable(row: FactTableRow): FactTable {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    data_source_id: row.data_source_id,
    name: row.name,
    sql: row.sql,
    unit_id_column: row.unit_id_column,
    timestamp_column: row.timestamp_column,
    restatement_hours: row.restatement_hours,
    columns: JSON.parse(row.columns) as FactColumn[],
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertDataSource(executor: Executor, row: DataSourceRow): Promise<void> {
  await executor.insertInto('data_sources').values(row).execute();
}

export async function findDataSource(executor: Executor, workspaceId: string, id: string): Promise<DataSourceRow | undefined> {
  return executor.selectFrom('data_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function lockDataSource(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<DataSourceRow | undefined> {
  return seam.forUpdate(executor.selectFrom('data_sources').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
}

export async function updateDataSource(executor: Executor, id: string, changes: Updateable<DataSourcesTable>): Promise<void> {
  await executor.updateTable('data_sources').set(changes).where('id', '=', id).execute();
}

export async function deleteDataSource(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('data_sources').where('id', '=', id).execute();
}

export async function listDataSources(executor: Executor, workspaceId: string, page: PageParams) {
  return paginate(executor.selectFrom('data_sources').selectAll().where('workspace_id', '=', workspaceId), 'id', page, toDataSource);
}

export async function insertFactTable(executor: Executor, row: FactTableRow): Promise<void> {
  await executor.insertInto('fact_tables').values(row).execute();
}

export async function findFactTable(executor: Executor, workspaceId: string, id: string): Promise<FactTableRow | undefined> {
  return executor.selectFrom('fact_tables').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function lockFactTable(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<FactTableRow | undefined> {
  return seam.forUpdate(executor.selectFrom('fact_tables').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
}

export async function updateFactTable(executor: Executor, id: string, changes: Updateable<FactTablesTable>): Promise<void> {
  await executor.updateTable('fact_tables').set(changes).where('id', '=', id).execute();
}

export async function deleteFactTable(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('fact_tables').where('id', '=', id).execute();
}

/** Names of the fact tables and assignment sources that read the source (what stops its deletion). */
export async function factTablesOf(executor: Executor, dataSourceId: string): Promise<Array<{ id: string; name: string }>> {
  const facts = await executor.selectFrom('fact_tables').select(['id', 'name']).where('data_source_id', '=', dataSourceId).orderBy('id').execute();
  const assignments = await executor.selectFrom('assignment_sources').select(['id', 'name']).where('data_source_id', '=', dataSourceId).orderBy('id').execute();
  return [...facts, ...assignments];
}

export async function listFactTables(executor: Executor, workspaceId: string, dataSourceId: string | undefined, page: PageParams) {
  let query = executor.selectFrom('fact_tables').selectAll().where('workspace_id', '=', workspaceId);
  if (dataSourceId !== undefined) query = query.where('data_source_id', '=', dataSourceId);
  return paginate(query, 'id', page, toFactTable);
}

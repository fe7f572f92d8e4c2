/**
 * What other slices may use of assignment sources: the experiments slice checks an experiment's
 * source exists, and a snapshot of an analysis-only experiment opens it to read its exposures.
 */
import type { Executor } from '../../db/database.js';
import type { DataSourceKind } from '../../db/tables/warehouse.js';
import type { FactReaderDeps, SessionLimits } from '../data-sources/read.js';
import { findDataSource } from '../data-sources/store.js';
import type { AssignmentQuery } from './first-exposures.js';
import { findAssignmentSource } from './store.js';

export { findAssignmentSource } from './store.js';
export { firstExposuresStatement, type AssignmentQuery } from './first-exposures.js';

/** An assignment source as a snapshot reads it: its query, and its data source opened. */
export interface OpenedAssignmentSource {
  id: string;
  name: string;
  query: AssignmentQuery;
  data_source_id: string;
  kind: DataSourceKind;
  /** The data source's URL, unsealed: only for the connection, never shown. */
  url: string;
  limits: SessionLimits;
}

export async function openAssignmentSource(ctx: FactReaderDeps, executor: Executor, workspaceId: string, id: string): Promise<OpenedAssignmentSource | null> {
  const row = await findAssignmentSource(executor, workspaceId, id);
  if (!row) return null;
  const source = await findDataSource(executor, workspaceId, row.data_source_id);
  if (!source) return null;
  const { sql, unit_id_column, experiment_key_column, variant_key_column, timestamp_column } = row;
  return {
    id: row.id,
    name: row.name,
    query: { sql, unit_id_column, experiment_key_column, variant_key_column, timestamp_column },
    data_source_id: source.id,
    kind: source.kind,
    url: ctx.secrets.open(source.url_enc),
    limits: { ...ctx.config.dataSources },
  };
}

/**
 * What the metrics and analysis slices need of a fact table: whether a metric's column and row
 * filter fit it (checked when the metric is saved), and the fact table with its source's sealed
 * URL opened (what a snapshot runs its statements on). Every read is scoped to the workspace.
 */
import type { Executor } from '../../db/database.js';
import type { DataSourceKind } from '../../db/tables/warehouse.js';
import { Problem, problems, type FieldError } from '../../http/problems.js';
import { SourceError, withSource, type SessionLimits } from './connectors/index.js';
import type { DataSourcesDeps } from './deps.js';
import { readOnlyExpressionDefect } from './read-only-sql.js';
import type { FactColumn } from './schemas.js';
import { findDataSource, findFactTable } from './store.js';

/** A metric's reading of a fact table, as its author gave it. */
export interface FactMetricDefinition {
  fact_table_id: string;
  /** The column summed or averaged; null counts rows. */
  column: string | null;
  filter: string | null;
  /** Whether the metric sums or averages a number (then the column must be a number). */
  readsNumber: boolean;
}

/** A fact table as a snapshot reads it: its SQL and columns, and its source opened. */
export interface OpenedFactTable {
  id: string;
  name: string;
  sql: string;
  unit_id_column: string;
  timestamp_column: string;
  /** Hours each incremental refresh reads again before the last one's cutoff. */
  restatement_hours: number;
  data_source_id: string;
  kind: DataSourceKind;
  /** The source's URL, unsealed: only for the connection, never shown. */
  url: string;
  limits: SessionLimits;
}

export type FactReaderDeps = Pick<DataSourcesDeps, 'db' | 'secrets' | 'config'>;

export async function openFactTable(ctx: FactReaderDeps, executor: Executor, workspaceId: string, id: string): Promise<OpenedFactTable | null> {
  const table = await findFactTable(executor, workspaceId, id);
  if (!table) return null;
  const source = await findDataSource(executor, workspaceId, table.data_source_id);
  if (!source) return null;
  return {
    id: table.id,
    name: table.name,
    sql: table.sql,
    unit_id_column: table.unit_id_column,
    timestamp_column: table.timestamp_column,
    restatement_hours: Number(table.restatement_hours),
    data_source_id: source.id,
    kind: source.kind,
    url: ctx.secrets.open(source.url_enc),
    limits: { ...ctx.config.dataSources },
  };
}

/** The filter tried on the source without reading a row: what it refuses (an unknown column, not a boolean) answers at /filter. */
async function filterOnSource(table: OpenedFactTable, filter: string): Promise<FieldError[]> {
  try {
    await withSource(table.kind, table.url, table.limits, (session) => session.describe(`SELECT * FROM (${table.sql}\n) AS f WHERE (${filter}\n)`));
    return [];
  } catch (error) {
    if (!(error instanceof SourceError)) throw error;
    if (error.reason === 'query') return [{ pointer: '/filter', message: `the source refused it: ${error.message}` }];
    throw error.reason === 'timeout' ? problems.dataSourceTimeout(error.message) : problems.dataSourceUnreachable(error.message);
  }
}

/**
 * Why the definition does not fit its fact table (422 problems naming the field), or nothing:
 * the fact table must be the workspace's, the column among its described columns (a number for
 * sum and mean), and the filter one read-only boolean expression the source accepts.
 */
export async function factMetricErrors(ctx: FactReaderDeps, workspaceId: string, definition: FactMetricDefinition): Promise<FieldError[]> {
  const table = await openFactTable(ctx, ctx.db, workspaceId, definition.fact_table_id);
  if (!table) return [{ pointer: '/fact_table_id', message: `no fact table with id ${definition.fact_table_id} in this workspace` }];
  const row = await findFactTable(ctx.db, workspaceId, table.id);
  const columns = JSON.parse(row?.columns ?? '[]') as FactColumn[];
  const errors: FieldError[] = [];
  if (definition.column !== null) {
    const column = columns.find((item) => item.name === definition.column);
    if (!column)
      errors.push({ pointer: '/column', message: `is not a column of fact table "${table.name}" (it has ${columns.map((c) => c.name).join(', ')})` });
    else if (definition.readsNumber && column.kind !== 'number')
      errors.push({ pointer: '/column', message: `sum and mean need a number column; the source says "${column.name}" is ${column.type}` });
  }
  if (definition.filter !== null) {
    const defect = readOnlyExpressionDefect(table.kind, definition.filter);
    if (defect) errors.push({ pointer: '/filter', message: defect });
    else if (errors.length === 0) errors.push(...(await filterOnSource(table, definition.filter)));
  }
  return errors;
}

/** Metrics that read the fact table: what stops its deletion. */
export async function metricsOnFactTable(executor: Executor, workspaceId: string, id: string): Promise<Array<{ id: string; key: string }>> {
  return executor.selectFrom('metrics').select(['id', 'key']).where('workspace_id', '=', workspaceId).where('fact_table_id', '=', id).orderBy('id').execute();
}

export function factTableInUse(name: string, referrers: Array<{ id: string; key: string }>): Problem {
  const shown = referrers.slice(0, 10).map((metric) => `metric "${metric.key}"`);
  const base = problems.factTableInUse(`fact table "${name}" is read by ${shown.join(', ')}; delete those metrics first`);
  return new Problem(409, base.detail, {
    type: base.type,
    title: base.title,
    extensions: { referrers: referrers.map((metric) => ({ type: 'metric', ...metric })) },
  });
}

import type { DataSourceKind } from '../../db/tables/warehouse.js';
import { problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { DescribedColumn } from './connectors/index.js';
import type { DataSourcesDeps } from './deps.js';
import { factTableInUse, metricsOnFactTable } from './fact-metric.js';
import { readOnlySelectDefect, trimmedSql } from './read-only-sql.js';
import type { FactColumn, FactTableInput, FactTablePatch, FactTableSummary } from './schemas.js';
import { onSource, type Actor } from './service.js';
import {
  deleteFactTable,
  findDataSource,
  findFactTable,
  insertFactTable,
  lockFactTable,
  toFactTable,
  updateFactTable,
  type DataSourceRow,
  type FactTableRow,
} from './store.js';

/** Hours re-read before the last refresh's cutoff when a fact table does not say (docs/warehouse.md). */
export const DEFAULT_RESTATEMENT_HOURS = 48;

const NUMBER = /^(smallint|integer|bigint|numeric|real|double precision|decimal|u?int\d*|float\d*|decimal.*|numeric\(.*)$/i;
const TIMESTAMP = /^(timestamp.*|date|datetime.*|date32)$/i;
const STRING = /^(text|character.*|varchar.*|uuid|string|fixedstring.*|lowcardinality\(string\)|enum.*|citext)$/i;

/** What a column can be used for, from the source's type name (Nullable(...) read as what it holds). */
export function columnKind(type: string): FactColumn['kind'] {
  const bare = type.replace(/^Nullable\((.*)\)$/, '$1').replace(/^LowCardinality\(Nullable\((.*)\)\)$/, 'LowCardinality($1)');
  if (TIMESTAMP.test(bare)) return 'timestamp';
  if (NUMBER.test(bare)) return 'number';
  if (/^(boolean|bool)$/i.test(bare)) return 'boolean';
  if (STRING.test(bare)) return 'string';
  return 'other';
}

function notFound(id: string) {
  return problems.notFound(`no fact table with id ${id}`);
}

/** The SQL refused before it reaches the source (422 at /sql) unless it is one read-only SELECT. */
function requireReadOnlySelect(kind: DataSourceKind, sql: string): void {
  const defect = readOnlySelectDefect(kind, sql);
  if (defect) throw problems.validation([{ pointer: '/sql', message: defect }]);
}

/** The described columns, checked against the unit id and timestamp columns the fact table names. */
function checkedColumns(described: DescribedColumn[], unitColumn: string, timestampColumn: string): FactColumn[] {
  const columns = described.map((column) => ({ ...column, kind: columnKind(column.type) }));
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column.name))
      throw problems.validation([{ pointer: '/sql', message: `returns two columns named "${column.name}": give each its own name (AS ...)` }]);
    seen.add(column.name);
  }
  const errors = [];
  const unit = columns.find((column) => column.name === unitColumn);
  if (!unit) errors.push({ pointer: '/unit_id_column', message: `is not a column the SQL returns (it returns ${columns.map((c) => c.name).join(', ')})` });
  const time = columns.find((column) => column.name === timestampColumn);
  if (!time) errors.push({ pointer: '/timestamp_column', message: `is not a column the SQL returns (it returns ${columns.map((c) => c.name).join(', ')})` });
  else if (time.kind !== 'timestamp')
    errors.push({ pointer: '/timestamp_column', message: `must be a timestamp or date column; the source says ${time.type}` });
  if (errors.length > 0) throw problems.validation(errors);
  return columns;
}

async function sourceFor(ctx: DataSourcesDeps, workspaceId: string, id: string): Promise<DataSourceRow> {
  const source = await findDataSource(ctx.db, workspaceId, id);
  if (!source) throw problems.validation([{ pointer: '/data_source_id', message: `no data source with id ${id} in this workspace` }]);
  return source;
}

/** Describes the SQL on the source (no row read) after the parser-level check. */
async function describe(ctx: DataSourcesDeps, source: DataSourceRow, sql: string, unitColumn: string, timestampColumn: string): Promise<FactColumn[]> {
  requireReadOnlySelect(source.kind, sql);
  const described = await onSource(ctx, source, (session) => session.describe(trimmedSql(sql)));
  return checkedColumns(described, unitColumn, timestampColumn);
}

export async function createFactTable(ctx: DataSourcesDeps, actor: Actor, input: FactTableInput) {
  const source = await sourceFor(ctx, actor.workspaceId, input.data_source_id);
  const columns = await describe(ctx, source, input.sql, input.unit_id_column, input.timestamp_column);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const row: FactTableRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      data_source_id: source.id,
      name: input.name,
      sql: trimmedSql(input.sql),
      unit_id_column: input.unit_id_column,
      timestamp_column: input.timestamp_column,
      restatement_hours: input.restatement_hours ?? DEFAULT_RESTATEMENT_HOURS,
      columns: JSON.stringify(columns),
      created_at: now,
      updated_at: now,
    };
    await insertFactTable(trx, row);
    const { name, sql, unit_id_column, timestamp_column, restatement_hours } = row;
    const payload = {
      data_source_id: source.id,
      name,
      sql,
      unit_id_column,
      timestamp_column,
      restatement_hours,
      columns: columns.map((column) => column.name),
    };
    await recordAudit(trx, { ...actor, action: 'fact_table.created', targetType: 'fact_table', targetId: row.id, payload, at: now });
    return toFactTable(row);
  });
}

export async function getFactTable(ctx: DataSourcesDeps, workspaceId: string, id: string) {
  const row = await findFactTable(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  return toFactTable(row);
}

/** Changes the name or the SQL and its columns (described again); an unchanged body logs nothing. */
export async function patchFactTable(ctx: DataSourcesDeps, actor: Actor, id: string, patch: FactTablePatch) {
  const current = await findFactTable(ctx.db, actor.workspaceId, id);
  if (!current) throw notFound(id);
  const next = {
    name: patch.name ?? current.name,
    sql: patch.sql === undefined ? current.sql : trimmedSql(patch.sql),
    unit_id_column: patch.unit_id_column ?? current.unit_id_column,
    timestamp_column: patch.timestamp_column ?? current.timestamp_column,
    restatement_hours: patch.restatement_hours ?? current.restatement_hours,
  };
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(next)) {
    const from = current[field as keyof typeof next];
    if (from !== to) changes[field] = { from, to };
  }
  if (Object.keys(changes).length === 0) return toFactTable(current);
  const reread = changes.sql || changes.unit_id_column || changes.timestamp_column;
  const source = await sourceFor(ctx, actor.workspaceId, current.data_source_id);
  const columns = reread ? JSON.stringify(await describe(ctx, source, next.sql, next.unit_id_column, next.timestamp_column)) : current.columns;
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await lockFactTable(trx, ctx.seam, actor.workspaceId, id))) throw notFound(id);
    const now = ctx.clock.now();
    await updateFactTable(trx, id, { ...next, columns, updated_at: now });
    await recordAudit(trx, { ...actor, action: 'fact_table.updated', targetType: 'fact_table', targetId: id, payload: { changes }, at: now });
    return toFactTable({ ...current, ...next, columns, updated_at: now });
  });
}

export async function removeFactTable(ctx: DataSourcesDeps, actor: Actor, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = await lockFactTable(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw notFound(id);
    const referrers = await metricsOnFactTable(trx, actor.workspaceId, id);
    if (referrers.length > 0) throw factTableInUse(current.name, referrers);
    await deleteFactTable(trx, id);
    const payload = { name: current.name, data_source_id: current.data_source_id };
    await recordAudit(trx, { ...actor, action: 'fact_table.deleted', targetType: 'fact_table', targetId: id, payload, at: ctx.clock.now() });
  });
}

/** Rows, distinct units and the time range, computed by the source: aggregates only leave it. */
export async function summarizeFactTable(ctx: DataSourcesDeps, workspaceId: string, id: string): Promise<FactTableSummary> {
  const row = await findFactTable(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  const source = await sourceFor(ctx, workspaceId, row.data_source_id);
  const quote = (name: string) =>
    source.kind === 'postgres' ? `"${name.replaceAll('"', '""')}"` : `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
  const unit = quote(row.unit_id_column);
  const time = quote(row.timestamp_column);
  const text = source.kind === 'postgres' ? (column: string) => `CAST(${column} AS text)` : (column: string) => `toString(${column})`;
  const sql = `SELECT count(*) AS rows, count(DISTINCT ${unit}) AS units, ${text(`min(${time})`)} AS first_timestamp, ${text(`max(${time})`)} AS last_timestamp FROM (${row.sql}\n) AS verdict_fact`;
  const started = performance.now();
  const [result] = await onSource(ctx, source, (session) =>
    session.rows<{ rows: unknown; units: unknown; first_timestamp: unknown; last_timestamp: unknown }>(sql),
  );
  const stamp = (value: unknown) => (value === null || value === undefined ? null : String(value));
  return {
    rows: Number(result?.rows ?? 0),
    units: Number(result?.units ?? 0),
    first_timestamp: stamp(result?.first_timestamp),
    last_timestamp: stamp(result?.last_timestamp),
    duration_ms: Math.round(performance.now() - started),
  };
}

/**
 * Assignment sources (docs/warehouse.md "Experiments assigned elsewhere"): SQL over a data source
 * giving, one row per exposure, the unit, the experiment's key, the variant's key and the time.
 * Checked like a fact table's (one read-only SELECT, described without reading a row), with the
 * four columns the user names; every change is audit-logged with the change.
 */
import { problems, Problem, type FieldError } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import type { DataSourcesDeps } from '../data-sources/deps.js';
import { columnKind } from '../data-sources/fact-tables.js';
import { readOnlySelectDefect, trimmedSql } from '../data-sources/read-only-sql.js';
import type { FactColumn } from '../data-sources/schemas.js';
import { onSource, type Actor } from '../data-sources/service.js';
import { findDataSource, type DataSourceRow } from '../data-sources/store.js';
import { summaryStatement, type AssignmentQuery } from './first-exposures.js';
import type { AssignmentSourceInput, AssignmentSourcePatch, AssignmentSourceSummary } from './schemas.js';
import {
  deleteAssignmentSource,
  experimentsOnAssignmentSource,
  findAssignmentSource,
  insertAssignmentSource,
  lockAssignmentSource,
  toAssignmentSource,
  updateAssignmentSource,
  type AssignmentSourceRow,
} from './store.js';

const COLUMN_FIELDS = ['unit_id_column', 'experiment_key_column', 'variant_key_column', 'timestamp_column'] as const;

function notFound(id: string): Problem {
  return problems.notFound(`no assignment source with id ${id}`);
}

async function dataSourceFor(ctx: DataSourcesDeps, workspaceId: string, id: string): Promise<DataSourceRow> {
  const source = await findDataSource(ctx.db, workspaceId, id);
  if (!source) throw problems.validation([{ pointer: '/data_source_id', message: `no data source with id ${id} in this workspace` }]);
  return source;
}

/** The described columns, checked against the four the assignment source names (each a column it returns; the time a timestamp). */
function checkedColumns(described: Array<{ name: string; type: string }>, query: AssignmentQuery): FactColumn[] {
  const columns = described.map((column) => ({ ...column, kind: columnKind(column.type) }));
  const names = columns.map((column) => column.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined)
    throw problems.validation([{ pointer: '/sql', message: `returns two columns named "${repeated}": give each its own name (AS ...)` }]);
  const errors: FieldError[] = [];
  for (const field of COLUMN_FIELDS) {
    const column = columns.find((item) => item.name === query[field]);
    if (!column) errors.push({ pointer: `/${field}`, message: `is not a column the SQL returns (it returns ${names.join(', ')})` });
    else if (field === 'timestamp_column' && column.kind !== 'timestamp')
      errors.push({ pointer: '/timestamp_column', message: `must be a timestamp or date column; the source says ${column.type}` });
  }
  if (errors.length > 0) throw problems.validation(errors);
  return columns;
}

/** The parser-level check, then the columns as the source describes them (no row read). */
async function describe(ctx: DataSourcesDeps, source: DataSourceRow, query: AssignmentQuery): Promise<FactColumn[]> {
  const defect = readOnlySelectDefect(source.kind, query.sql);
  if (defect) throw problems.validation([{ pointer: '/sql', message: defect }]);
  const described = await onSource(ctx, source, (session) => session.describe(trimmedSql(query.sql)));
  return checkedColumns(described, query);
}

function queryOf(row: Pick<AssignmentSourceRow, 'sql' | (typeof COLUMN_FIELDS)[number]>): AssignmentQuery {
  const { sql, unit_id_column, experiment_key_column, variant_key_column, timestamp_column } = row;
  return { sql, unit_id_column, experiment_key_column, variant_key_column, timestamp_column };
}

async function audit(ctx: DataSourcesDeps, trx: Parameters<typeof recordAudit>[0], actor: Actor, action: string, id: string, payload: Record<string, unknown>) {
  await recordAudit(trx, { ...actor, action: `assignment_source.${action}`, targetType: 'assignment_source', targetId: id, payload, at: ctx.clock.now() });
}

export async function createAssignmentSource(ctx: DataSourcesDeps, actor: Actor, input: AssignmentSourceInput) {
  const source = await dataSourceFor(ctx, actor.workspaceId, input.data_source_id);
  const query = { ...queryOf(input), sql: trimmedSql(input.sql) };
  const columns = await describe(ctx, source, query);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const row: AssignmentSourceRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      data_source_id: source.id,
      name: input.name,
      ...query,
      columns: JSON.stringify(columns),
      created_at: now,
      updated_at: now,
    };
    await insertAssignmentSource(trx, row);
    await audit(ctx, trx, actor, 'created', row.id, { data_source_id: source.id, name: row.name, ...query, columns: columns.map((column) => column.name) });
    return toAssignmentSource(row);
  });
}

export async function getAssignmentSource(ctx: DataSourcesDeps, workspaceId: string, id: string) {
  const row = await findAssignmentSource(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  return toAssignmentSource(row);
}

/** Changes the name, or the SQL or a column (described again); an unchanged body logs nothing. */
export async function patchAssignmentSource(ctx: DataSourcesDeps, actor: Actor, id: string, patch: AssignmentSourcePatch) {
  const current = await findAssignmentSource(ctx.db, actor.workspaceId, id);
  if (!current) throw notFound(id);
  const next = { name: patch.name ?? current.name, ...queryOf({ ...current, ...patch, sql: patch.sql === undefined ? current.sql : trimmedSql(patch.sql) }) };
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(next)) {
    const from = current[field as keyof typeof next];
    if (from !== to) changes[field] = { from, to };
  }
  if (Object.keys(changes).length === 0) return toAssignmentSource(current);
  const reread = Object.keys(changes).some((field) => field !== 'name');
  const source = await dataSourceFor(ctx, actor.workspaceId, current.data_source_id);
  const columns = reread ? JSON.stringify(await describe(ctx, source, queryOf(next))) : current.columns;
  return ctx.db.transaction().execute(async (trx) => {
    if (!(await lockAssignmentSource(trx, ctx.seam, actor.workspaceId, id))) throw notFound(id);
    const now = ctx.clock.now();
    await updateAssignmentSource(trx, id, { ...next, columns, updated_at: now });
    await audit(ctx, trx, actor, 'updated', id, { changes });
    return toAssignmentSource({ ...current, ...next, columns, updated_at: now });
  });
}

/** Deletes it; refused (409, `referrers`) while an experiment reads its exposures from it. */
export async function removeAssignmentSource(ctx: DataSourcesDeps, actor: Actor, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const current = await lockAssignmentSource(trx, ctx.seam, actor.workspaceId, id);
    if (!current) throw notFound(id);
    const referrers = await experimentsOnAssignmentSource(trx, actor.workspaceId, id);
    if (referrers.length > 0) {
      const shown = referrers.slice(0, 10).map((experiment) => `experiment "${experiment.key}"`);
      const base = problems.assignmentSourceInUse(
        `assignment source "${current.name}" gives the exposures of ${shown.join(', ')}; delete those experiments first`,
      );
      throw new Problem(409, base.detail, {
        type: base.type,
        title: base.title,
        extensions: { referrers: referrers.map((item) => ({ type: 'experiment', ...item })) },
      });
    }
    await deleteAssignmentSource(trx, id);
    await audit(ctx, trx, actor, 'deleted', id, { name: current.name, data_source_id: current.data_source_id });
  });
}

const SUMMARY_EXPERIMENTS = 100;

type SummaryRow = { experiment_key: unknown; variant_key: unknown; units: unknown; several: unknown; first_timestamp: unknown; last_timestamp: unknown };

/** Per experiment key, its units by the variant of their first exposure: computed by the source, aggregates only. */
export async function summarizeAssignmentSource(ctx: DataSourcesDeps, workspaceId: string, id: string): Promise<AssignmentSourceSummary> {
  const row = await findAssignmentSource(ctx.db, workspaceId, id);
  if (!row) throw notFound(id);
  const source = await dataSourceFor(ctx, workspaceId, row.data_source_id);
  const started = performance.now();
  const rows = await onSource(ctx, source, (session) => session.rows<SummaryRow>(summaryStatement(source.kind, queryOf(row))));
  const byKey = new Map<string, AssignmentSourceSummary['experiments'][number]>();
  const stamp = (value: unknown) => (value === null || value === undefined ? null : String(value));
  for (const item of rows) {
    const key = String(item.experiment_key);
    const entry = byKey.get(key) ?? { experiment_key: key, units: 0, variants: [], units_in_several_variants: 0, first_timestamp: null, last_timestamp: null };
    const units = Number(item.units);
    entry.units += units;
    entry.units_in_several_variants += Number(item.several);
    entry.variants.push({ variant_key: String(item.variant_key), units });
    const first = stamp(item.first_timestamp);
    const last = stamp(item.last_timestamp);
    if (first !== null && (entry.first_timestamp === null || first < entry.first_timestamp)) entry.first_timestamp = first;
    if (last !== null && (entry.last_timestamp === null || last > entry.last_timestamp)) entry.last_timestamp = last;
    byKey.set(key, entry);
  }
  const experiments = [...byKey.values()]
    .map((entry) => ({ ...entry, variants: entry.variants.sort((a, b) => (a.variant_key < b.variant_key ? -1 : 1)) }))
    .sort((a, b) => b.units - a.units || (a.experiment_key < b.experiment_key ? -1 : 1))
    .slice(0, SUMMARY_EXPERIMENTS);
  return { experiments, duration_ms: Math.round(performance.now() - started) };
}

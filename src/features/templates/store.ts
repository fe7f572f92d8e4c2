import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { TemplatesTable, TemplateVersionsTable } from '../../db/tables/templates.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, paginate, type Page, type PageParams } from '../../http/pagination.js';
import { problems } from '../../http/problems.js';
import { toIso } from '../../lib/time.js';
import type { JSONSchema } from './fields-schema.js';

export type TemplateRow = Selectable<TemplatesTable>;
export type VersionRow = Selectable<TemplateVersionsTable>;

export function labelOf(seq: number): string {
  return `v${seq}`;
}

/** The sequence number a label names, or undefined when it is not a label we issue. */
export function seqOf(label: string): number | undefined {
  return /^v[1-9][0-9]{0,8}$/.test(label) ? Number(label.slice(1)) : undefined;
}

export function toTemplate(row: TemplateRow) {
  return {
    id: row.id,
    name: row.name,
    body: row.body,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
    latest_version: row.version_count > 0 ? labelOf(row.version_count) : null,
  };
}

export function toVersion(row: VersionRow) {
  return {
    template_id: row.template_id,
    label: row.label,
    body_snapshot: row.body_snapshot,
    fields_schema: JSON.parse(row.fields_schema) as JSONSchema & Record<string, unknown>,
    created_at: toIso(row.created_at),
  };
}

export async function insertTemplate(executor: Executor, row: TemplateRow): Promise<void> {
  await executor.insertInto('templates').values(row).execute();
}

/** A live template; `includeDeleted` also finds soft-deleted ones (their versions still render). */
export async function findTemplate(executor: Executor, workspaceId: string, id: string, includeDeleted = false): Promise<TemplateRow | undefined> {
  let query = executor.selectFrom('templates').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  if (!includeDeleted) query = query.where('deleted_at', 'is', null);
  return query.executeTakeFirst();
}

export async function listTemplates(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('templates').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null);
  return paginate(query, 'id', page, toTemplate);
}

export async function updateTemplate(
  executor: Executor,
  workspaceId: string,
  id: string,
  changes: { name?: string; body?: string; updated_at: number },
): Promise<TemplateRow | undefined> {
  return executor
    .updateTable('templates')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function softDeleteTemplate(executor: Executor, workspaceId: string, id: string, at: number): Promise<TemplateRow | undefined> {
  return executor
    .updateTable('templates')
    .set({ deleted_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Takes the next version number and the draft as it is now, in one statement. The UPDATE locks
 * the template row until the caller's transaction ends (PostgreSQL; SQLite has one writer), so
 * concurrent freezes queue up and each sees the count and body the previous one left.
 */
export async function claimNextVersion(executor: Executor, workspaceId: string, id: string): Promise<{ seq: number; body: string } | undefined> {
  const row = await executor
    .updateTable('templates')
    .set((eb) => ({ version_count: eb('version_count', '+', 1) }))
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning(['version_count', 'body'])
    .executeTakeFirst();
  return row && { seq: row.version_count, body: row.body };
}

/** The only write to template_versions: versions are inserted once and never updated. */
export async function insertVersion(executor: Executor, row: VersionRow): Promise<void> {
  await executor.insertInto('template_versions').values(row).execute();
}

export async function findVersion(executor: Executor, workspaceId: string, templateId: string, seq: number): Promise<VersionRow | undefined> {
  return executor
    .selectFrom('template_versions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .where('seq', '=', seq)
    .executeTakeFirst();
}

function versionCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ after: labelOf(seq) })).toString('base64url');
}

function afterSeq(cursor: string): number {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    const after = typeof parsed === 'object' && parsed !== null ? (parsed as { after?: unknown }).after : undefined;
    const seq = typeof after === 'string' ? seqOf(after) : undefined;
    if (seq !== undefined) return seq;
  } catch {
    // falls through to the problem below
  }
  throw problems.invalidParameters([{ parameter: 'cursor', message: 'is not a cursor this API issued' }]);
}

/** Keyset pages in version order (the sequence number, not the insertion time). */
export async function listVersions(executor: Executor, workspaceId: string, templateId: string, page: PageParams): Promise<Page<ReturnType<typeof toVersion>>> {
  const limit = Math.min(page.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  let query = executor.selectFrom('template_versions').selectAll().where('workspace_id', '=', workspaceId).where('template_id', '=', templateId);
  if (page.cursor) query = query.where('seq', '>', afterSeq(page.cursor));
  const rows = await query
    .orderBy('seq')
    .limit(limit + 1)
    .execute();
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data: data.map(toVersion), next_cursor: rows.length > limit && last ? versionCursor(last.seq) : null };
}

import type { Selectable } from 'kysely';
import type { Db, Executor } from '../../db/database.js';
import type { RenderFormat, RenderOutputsTable, RendersTable, RenderStatus } from '../../db/tables/templates.js';
import { paginate, type Page, type PageParams } from '../../http/pagination.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import type { RenderedOutput } from './document.js';

export type RenderRow = Selectable<RendersTable>;
export type OutputMeta = Pick<Selectable<RenderOutputsTable>, 'format' | 'content_type' | 'byte_size'>;

export function toRender(row: RenderRow, outputs: OutputMeta[]) {
  const formats = JSON.parse(row.formats) as RenderFormat[];
  const byFormat = new Map(outputs.map((output) => [output.format, output]));
  return {
    id: row.id,
    template_id: row.template_id,
    version: row.version_label,
    formats,
    status: row.status,
    outputs: formats.flatMap((format) => {
      const output = byFormat.get(format);
      if (!output || row.status !== 'resolved') return [];
      return [{ format, content_type: output.content_type, bytes: output.byte_size, url: `/v1/renders/${row.id}/outputs/${format}` }];
    }),
    error: row.error,
    created_at: toIso(row.created_at),
    resolved_at: toIsoOrNull(row.resolved_at),
  };
}

export async function insertRender(executor: Executor, row: RenderRow): Promise<void> {
  await executor.insertInto('renders').values(row).execute();
}

export async function findRender(executor: Executor, workspaceId: string, id: string): Promise<RenderRow | undefined> {
  return executor.selectFrom('renders').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/** A page of the workspace's renders, newest first, optionally of one template or in one status. */
export async function listRenderRows(
  executor: Executor,
  workspaceId: string,
  filter: { templateId?: string | undefined; status?: RenderStatus | undefined },
  page: PageParams,
): Promise<Page<RenderRow>> {
  let query = executor.selectFrom('renders').selectAll().where('workspace_id', '=', workspaceId);
  if (filter.templateId !== undefined) query = query.where('template_id', '=', filter.templateId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  return paginate(query, 'id', page, (row) => row, 'desc');
}

/** Output metadata of several renders at once, by render id. */
export async function listOutputMetaOf(executor: Executor, renderIds: readonly string[]): Promise<Map<string, OutputMeta[]>> {
  const byRender = new Map<string, OutputMeta[]>();
  if (renderIds.length === 0) return byRender;
  const rows = await executor
    .selectFrom('render_outputs')
    .select(['render_id', 'format', 'content_type', 'byte_size'])
    .where('render_id', 'in', renderIds)
    .execute();
  for (const { render_id, ...meta } of rows) byRender.set(render_id, [...(byRender.get(render_id) ?? []), meta]);
  return byRender;
}

export async function findOutput(executor: Executor, renderId: string, format: RenderFormat) {
  return executor
    .selectFrom('render_outputs')
    .select(['content_type', 'content'])
    .where('render_id', '=', renderId)
    .where('format', '=', format)
    .executeTakeFirst();
}

/** Claims the render for a job attempt; undefined when it already finished (a repeated job). */
export async function markRunning(db: Db, id: string, now: number): Promise<RenderRow | undefined> {
  return db
    .updateTable('renders')
    .set({ status: 'running', updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .returningAll()
    .executeTakeFirst();
}

/** Stores every output and resolves the render in one transaction: all formats or none. */
export async function resolveRender(db: Db, id: string, outputs: RenderedOutput[], now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // A previous attempt may have died between writing outputs and committing; start clean.
    await trx.deleteFrom('render_outputs').where('render_id', '=', id).execute();
    await trx
      .insertInto('render_outputs')
      .values(
        outputs.map((output) => ({
          render_id: id,
          format: output.format,
          content_type: output.contentType,
          content: output.content,
          byte_size: output.content.length,
          created_at: now,
        })),
      )
      .execute();
    await trx
      .updateTable('renders')
      .set({ status: 'resolved', error: null, resolved_at: now, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  });
}

/** Fails a render that has not finished; `executor` is the job failure's transaction when the queue gives up. */
export async function failRender(executor: Executor, id: string, reason: string, now: number): Promise<void> {
  await executor
    .updateTable('renders')
    .set({ status: 'failed', error: reason.slice(0, 2_000), resolved_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .execute();
}

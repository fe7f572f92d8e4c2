import type { RenderFormat } from '../../db/tables/templates.js';
import { Problem, problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import { findVersion, requireTemplateWithVersions, seqOf, type TemplateRow, type VersionRow } from '../templates/read.js';
import { validateRenderData } from './data-validation.js';
import type { RendersDeps } from './deps.js';
import { RENDER_JOB, RENDER_JOB_MAX_ATTEMPTS } from './job-name.js';
import type { RenderInput, RenderListQuery } from './schemas.js';
import { findOutput, findRender, insertRender, listOutputMetaOf, listRenderRows, toRender, type RenderRow } from './store.js';

/** The version a render pins: the label asked for, or the latest one. */
async function pinVersion(ctx: RendersDeps, template: TemplateRow, label: string | undefined): Promise<VersionRow> {
  if (label === undefined && template.version_count === 0) {
    // The interface fixes this problem's shape: about:blank, "Unprocessable", 422.
    throw new Problem(422, `template ${template.id} has no frozen version yet; freeze one with POST /v1/templates/${template.id}/versions, then render`, {
      type: 'about:blank',
      title: 'Unprocessable',
    });
  }
  const seq = label === undefined ? template.version_count : seqOf(label);
  const version = seq === undefined ? undefined : await findVersion(ctx.db, template.workspace_id, template.id, seq);
  if (!version) throw problems.notFound(`template ${template.id} has no version ${label ?? ''}`.trim());
  return version;
}

/** Validates the request against the pinned version and queues the render job (202). */
export async function createRender(ctx: RendersDeps, workspaceId: string, actorId: string, input: RenderInput) {
  const template = await requireTemplateWithVersions(ctx, workspaceId, input.template_id);
  const version = await pinVersion(ctx, template, input.version);
  validateRenderData(`${version.template_id}:${version.seq}`, version.fields_schema, input.data);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const row: RenderRow = {
      id: newId(),
      workspace_id: workspaceId,
      template_id: template.id,
      version_seq: version.seq,
      version_label: version.label,
      formats: JSON.stringify(input.formats),
      data: JSON.stringify(input.data),
      status: 'queued',
      error: null,
      created_at: now,
      updated_at: now,
      resolved_at: null,
    };
    await insertRender(trx, row);
    await ctx.enqueue(trx, { name: RENDER_JOB, payload: { render_id: row.id }, workspaceId, maxAttempts: RENDER_JOB_MAX_ATTEMPTS });
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'render.created',
      targetType: 'render',
      targetId: row.id,
      // The data is not copied here: it may hold personal details the audit log should not keep.
      payload: { template_id: row.template_id, version: row.version_label, formats: input.formats },
      at: now,
    });
    return toRender(row, []);
  });
}

export async function getRender(ctx: RendersDeps, workspaceId: string, id: string) {
  const row = await findRender(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no render with id ${id}`);
  const outputs = row.status === 'resolved' ? await listOutputMetaOf(ctx.db, [id]) : new Map();
  return toRender(row, outputs.get(id) ?? []);
}

/** GET /v1/renders: newest first, each with its outputs once resolved. */
export async function listRenders(ctx: RendersDeps, workspaceId: string, query: RenderListQuery) {
  const page = await listRenderRows(ctx.db, workspaceId, { templateId: query.template_id, status: query.status }, { limit: query.limit, cursor: query.cursor });
  const resolved = page.data.filter((row) => row.status === 'resolved').map((row) => row.id);
  const outputs = await listOutputMetaOf(ctx.db, resolved);
  return { data: page.data.map((row) => toRender(row, outputs.get(row.id) ?? [])), next_cursor: page.next_cursor };
}

/**
 * The bytes of one output. 404 when the render does not exist or did not ask for the format;
 * 409 while it is queued or running (with Retry-After) and when it failed.
 */
export async function getOutput(ctx: RendersDeps, workspaceId: string, id: string, format: RenderFormat) {
  const row = await findRender(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no render with id ${id}`);
  const formats = JSON.parse(row.formats) as RenderFormat[];
  if (!formats.includes(format)) throw problems.notFound(`render ${id} did not ask for ${format}; it has ${formats.join(', ')}`);
  if (row.status === 'failed') throw problems.renderFailed(`render ${id} failed: ${row.error ?? 'unknown error'}`);
  if (row.status !== 'resolved') {
    const { type, title } = problems.renderNotReady('');
    throw new Problem(409, `render ${id} is ${row.status}; poll GET /v1/renders/${id} until it is resolved`, { type, title, headers: { 'retry-after': '1' } });
  }
  const output = await findOutput(ctx.db, id, format);
  if (!output) throw problems.notFound(`render ${id} has no ${format} output`);
  return { contentType: output.content_type, content: Buffer.from(output.content) };
}

import { Problem, problems } from '../../http/problems.js';
import { newId } from '../../lib/ids.js';
import { recordAudit } from '../audit/recorder.js';
import { checkTemplateBody } from './engine.js';
import { discoverFieldsSchema } from './fields-schema.js';
import type { TemplatesDeps } from './deps.js';
import type { TemplateInput, TemplatePatch } from './schemas.js';
import {
  claimNextVersion,
  findTemplate,
  findVersion,
  insertTemplate,
  insertVersion,
  labelOf,
  seqOf,
  softDeleteTemplate,
  toTemplate,
  toVersion,
  updateTemplate,
  type TemplateRow,
} from './store.js';
import { TemplateSyntaxError } from './syntax.js';

/** A body Handlebars rejects: 422 pointing at /body, with the 1-based line and column. */
function bodyProblem(error: TemplateSyntaxError): Problem {
  const message = `${error.message} (line ${error.line}, column ${error.column})`;
  const base = problems.validation([{ pointer: '/body', message }]);
  return new Problem(422, base.detail, {
    type: base.type,
    title: base.title,
    errors: base.errors,
    extensions: { line: error.line, column: error.column },
  });
}

function checkBody(body: string): void {
  try {
    checkTemplateBody(body);
  } catch (error) {
    if (error instanceof TemplateSyntaxError) throw bodyProblem(error);
    throw error;
  }
}

function templateNotFound(id: string): Problem {
  return problems.notFound(`no template with id ${id}`);
}

export async function createTemplate(ctx: TemplatesDeps, workspaceId: string, actorId: string, input: TemplateInput) {
  checkBody(input.body);
  return ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const row: TemplateRow = {
      id: newId(),
      workspace_id: workspaceId,
      name: input.name,
      body: input.body,
      version_count: 0,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    await insertTemplate(trx, row);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'template.created',
      targetType: 'template',
      targetId: row.id,
      payload: { name: row.name },
      at: now,
    });
    return toTemplate(row);
  });
}

export async function getTemplate(ctx: TemplatesDeps, workspaceId: string, id: string) {
  const row = await findTemplate(ctx.db, workspaceId, id);
  if (!row) throw templateNotFound(id);
  return toTemplate(row);
}

/** Edits the draft; a patch that changes nothing writes nothing and records nothing. */
export async function editTemplate(ctx: TemplatesDeps, workspaceId: string, actorId: string, id: string, patch: TemplatePatch) {
  if (patch.body !== undefined) checkBody(patch.body);
  return ctx.db.transaction().execute(async (trx) => {
    const current = await findTemplate(trx, workspaceId, id);
    if (!current) throw templateNotFound(id);
    const changed = (['name', 'body'] as const).filter((field) => patch[field] !== undefined && patch[field] !== current[field]);
    if (changed.length === 0) return toTemplate(current);
    const now = ctx.clock.now();
    const updated = await updateTemplate(trx, workspaceId, id, { ...patch, updated_at: now });
    if (!updated) throw templateNotFound(id);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'template.updated',
      targetType: 'template',
      targetId: id,
      payload: { changed, name: updated.name },
      at: now,
    });
    return toTemplate(updated);
  });
}

/** Soft delete: the draft answers 404 from now on; its versions stay readable and renderable. */
export async function deleteTemplate(ctx: TemplatesDeps, workspaceId: string, actorId: string, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now();
    const deleted = await softDeleteTemplate(trx, workspaceId, id, now);
    if (!deleted) throw templateNotFound(id);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'template.deleted',
      targetType: 'template',
      targetId: id,
      payload: { name: deleted.name, versions: deleted.version_count },
      at: now,
    });
  });
}

/**
 * Freezes the draft as the next version: number, body and fields schema are taken together
 * under the template's row lock, so concurrent freezes get v1, v2, ... without gaps or repeats.
 */
export async function freezeVersion(ctx: TemplatesDeps, workspaceId: string, actorId: string, id: string) {
  return ctx.db.transaction().execute(async (trx) => {
    const claimed = await claimNextVersion(trx, workspaceId, id);
    if (!claimed) throw templateNotFound(id);
    let fieldsSchema;
    try {
      // Saved bodies passed this check; it runs again in case the helper set changed since.
      checkTemplateBody(claimed.body);
      fieldsSchema = discoverFieldsSchema(claimed.body);
    } catch (error) {
      if (error instanceof TemplateSyntaxError) {
        throw problems.draftDoesNotCompile(
          `the draft no longer compiles: ${error.message} (line ${error.line}, column ${error.column}); fix it with PATCH, then freeze`,
        );
      }
      throw error;
    }
    const now = ctx.clock.now();
    const row = {
      template_id: id,
      seq: claimed.seq,
      workspace_id: workspaceId,
      label: labelOf(claimed.seq),
      body_snapshot: claimed.body,
      fields_schema: JSON.stringify(fieldsSchema),
      created_at: now,
    };
    await insertVersion(trx, row);
    await recordAudit(trx, {
      workspaceId,
      actorId,
      action: 'template_version.created',
      targetType: 'template',
      targetId: id,
      payload: { label: row.label },
      at: now,
    });
    return toVersion(row);
  });
}

/** Versions outlive their template: a deleted template's versions are still found. */
export async function requireTemplateWithVersions(ctx: TemplatesDeps, workspaceId: string, id: string): Promise<TemplateRow> {
  const template = await findTemplate(ctx.db, workspaceId, id, true);
  if (!template || (template.deleted_at !== null && template.version_count === 0)) throw templateNotFound(id);
  return template;
}

export async function getVersion(ctx: TemplatesDeps, workspaceId: string, templateId: string, label: string) {
  await requireTemplateWithVersions(ctx, workspaceId, templateId);
  const seq = seqOf(label);
  const row = seq === undefined ? undefined : await findVersion(ctx.db, workspaceId, templateId, seq);
  if (!row) throw problems.notFound(`template ${templateId} has no version ${label}`);
  return toVersion(row);
}

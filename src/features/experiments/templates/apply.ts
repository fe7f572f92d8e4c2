import type { Executor } from '../../../db/database.js';
import { problems, type FieldError } from '../../../http/problems.js';
import type { ExperimentCreateInput, ExperimentInput } from '../schemas.js';
import { DEFINITION_FIELDS } from './schemas.js';
import { findTemplate, toTemplate } from './store.js';

export interface FromTemplate {
  input: ExperimentInput;
  /** The template it started from, for the audit entry; empty without one. */
  origin: Record<string, unknown>;
}

/**
 * A new experiment's body with its template's fields filling those it leaves out (a field the body
 * gives wins whole: its tags replace the template's). Unit type and variants are required of one
 * of the two.
 */
export async function applyTemplate(executor: Executor, workspaceId: string, body: ExperimentCreateInput): Promise<FromTemplate> {
  const { template_id: templateId, ...fields } = body;
  const merged: Record<string, unknown> = { ...fields };
  let origin: Record<string, unknown> = {};
  if (templateId !== undefined) {
    const row = await findTemplate(executor, workspaceId, templateId);
    if (!row) throw problems.validation([{ pointer: '/template_id', message: 'no experiment template with this id exists in the workspace' }]);
    const template = toTemplate(row);
    for (const field of DEFINITION_FIELDS) if (merged[field] === undefined && template[field] !== undefined) merged[field] = template[field];
    origin = { template: { id: template.id, name: template.name } };
  }
  const missing: FieldError[] = (['unit_type', 'variants'] as const)
    .filter((field) => merged[field] === undefined)
    .map((field) => ({ pointer: `/${field}`, message: templateId ? 'is required: neither the body nor the template gives it' : 'is required' }));
  if (missing.length > 0) throw problems.validation(missing);
  return { input: merged as ExperimentInput, origin };
}

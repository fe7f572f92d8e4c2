import type { Tx } from '../../../db/database.js';
import { problems, type FieldError } from '../../../http/problems.js';
import { newId } from '../../../lib/ids.js';
import { recordAudit } from '../../audit/recorder.js';
import type { ExperimentsDeps } from '../deps.js';
import { allocationErrors, normalizeAllocation } from '../allocation.js';
import { normalizeTags, tagErrors } from '../labels.js';
import { secondaryOverlapErrors } from '../multiple-testing.js';
import { findExperiment, toExperiment, type Experiment } from '../read.js';
import { referenceErrors } from '../references.js';
import { dimensionErrors, variantErrors } from '../rules.js';
import { DEFINITION_FIELDS, type ExperimentTemplate, type TemplateDefinition, type TemplateInput, type TemplatePatch } from './schemas.js';
import { deleteTemplateRow, findTemplate, insertTemplate, toTemplate, updateTemplate, type TemplateRow } from './store.js';

interface Actor {
  workspaceId: string;
  actorId: string;
}

/** The fields of a definition that are set, in the template's order. */
export function definitionOf(source: Partial<Record<keyof TemplateDefinition, unknown>>): TemplateDefinition {
  const picked = DEFINITION_FIELDS.filter((field) => source[field] !== undefined).map((field) => [field, source[field]]);
  const definition = Object.fromEntries(picked) as TemplateDefinition;
  if (definition.tags) definition.tags = normalizeTags(definition.tags);
  return definition;
}

/** What of an experiment a template keeps: its variants at the weights it started with, never its results or lifecycle. */
function definitionOfExperiment(source: Experiment): TemplateDefinition {
  const starting = source.allocation_periods[0]?.weights;
  return definitionOf({
    ...source,
    variants: source.variants.map(({ key, weight, description, is_control }) => ({
      key,
      weight: starting?.[key] ?? weight,
      is_control,
      ...(description ? { description } : {}),
    })),
  });
}

/** What is wrong with a definition on its own; the experiment made from it is checked in full when created. */
function definitionErrors(definition: TemplateDefinition): FieldError[] {
  const { variants, allocation, primary_metric_id: primary } = definition;
  return [
    ...(variants ? variantErrors(variants) : []),
    ...(variants && allocation ? allocationErrors(normalizeAllocation(allocation), variants.length, primary) : []),
    ...secondaryOverlapErrors(primary ?? null, definition.guardrail_metric_ids ?? [], definition.secondary_metric_ids ?? []),
    ...dimensionErrors(definition.dimensions),
    ...tagErrors(definition.tags),
  ];
}

async function assertValid(trx: Tx, workspaceId: string, definition: TemplateDefinition): Promise<void> {
  const shape = definitionErrors(definition);
  if (shape.length > 0) throw problems.validation(shape);
  const refs = await referenceErrors(trx, workspaceId, definition);
  if (refs.length > 0) throw problems.validation(refs);
}

async function audit(trx: Tx, actor: Actor, action: string, id: string, payload: Record<string, unknown>, at: number) {
  await recordAudit(trx, { ...actor, action, targetType: 'experiment_template', targetId: id, payload, at });
}

export async function createTemplate(ctx: ExperimentsDeps, actor: Actor, input: TemplateInput): Promise<ExperimentTemplate> {
  return ctx.db.transaction().execute(async (trx) => {
    let base: TemplateDefinition = {};
    let origin: Record<string, unknown> = {};
    if (input.from_experiment_id) {
      const source = await findExperiment(trx, actor.workspaceId, input.from_experiment_id);
      if (!source) throw problems.validation([{ pointer: '/from_experiment_id', message: 'no experiment with this id exists in the workspace' }]);
      base = definitionOfExperiment(toExperiment(source));
      origin = { from_experiment: { id: source.id, key: source.key, name: source.name } };
    }
    const definition = { ...base, ...definitionOf(input) };
    await assertValid(trx, actor.workspaceId, definition);
    const now = ctx.clock.now();
    const row: TemplateRow = {
      id: newId(),
      workspace_id: actor.workspaceId,
      name: input.name,
      description: input.description ?? null,
      definition: JSON.stringify(definition),
      created_at: now,
      updated_at: now,
    };
    await insertTemplate(trx, row);
    const template = toTemplate(row);
    await audit(trx, actor, 'experiment_template.created', row.id, { template, ...origin }, now);
    return template;
  });
}

export async function getTemplate(ctx: ExperimentsDeps, workspaceId: string, id: string): Promise<ExperimentTemplate> {
  const row = await findTemplate(ctx.db, workspaceId, id);
  if (!row) throw problems.notFound(`no experiment template with id ${id}`);
  return toTemplate(row);
}

export async function patchTemplate(ctx: ExperimentsDeps, actor: Actor, id: string, patch: TemplatePatch): Promise<ExperimentTemplate> {
  return ctx.db.transaction().execute(async (trx) => {
    const row = await findTemplate(trx, actor.workspaceId, id);
    if (!row) throw problems.notFound(`no experiment template with id ${id}`);
    const before = toTemplate(row);
    const definition = { ...definitionOf(before), ...definitionOf(patch) };
    await assertValid(trx, actor.workspaceId, definition);
    const now = ctx.clock.now();
    const changes: Partial<TemplateRow> = { definition: JSON.stringify(definition), updated_at: now };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.description !== undefined) changes.description = patch.description;
    const after = toTemplate({ ...row, ...changes });
    const fields = ['name', 'description', ...DEFINITION_FIELDS] as const;
    const changed = fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
    if (changed.length === 0) return before;
    await updateTemplate(trx, row.id, changes);
    const diff = Object.fromEntries(changed.map((field) => [field, { from: before[field] ?? null, to: after[field] ?? null }]));
    await audit(trx, actor, 'experiment_template.updated', row.id, { changes: diff }, now);
    return after;
  });
}

/** Experiments made from a template are copies: deleting it changes none of them. */
export async function deleteTemplate(ctx: ExperimentsDeps, actor: Actor, id: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const row = await findTemplate(trx, actor.workspaceId, id);
    if (!row) throw problems.notFound(`no experiment template with id ${id}`);
    await deleteTemplateRow(trx, row.id);
    await audit(trx, actor, 'experiment_template.deleted', row.id, { template: toTemplate(row) }, ctx.clock.now());
  });
}

import type { Selectable } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { ExperimentTemplatesTable } from '../../../db/tables/experiments.js';
import { paginate, type PageParams } from '../../../http/pagination.js';
import { toIso } from '../../../lib/time.js';
import type { ExperimentTemplate, TemplateDefinition } from './schemas.js';

export type TemplateRow = Selectable<ExperimentTemplatesTable>;

export function toTemplate(row: TemplateRow): ExperimentTemplate {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    description: row.description,
    ...(JSON.parse(row.definition) as TemplateDefinition),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertTemplate(executor: Executor, row: TemplateRow): Promise<void> {
  await executor.insertInto('experiment_templates').values(row).execute();
}

export async function updateTemplate(executor: Executor, id: string, changes: Partial<TemplateRow>): Promise<void> {
  await executor.updateTable('experiment_templates').set(changes).where('id', '=', id).execute();
}

export async function deleteTemplateRow(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('experiment_templates').where('id', '=', id).execute();
}

/** A template of the workspace by id; another workspace's is never found. */
export async function findTemplate(executor: Executor, workspaceId: string, id: string): Promise<TemplateRow | undefined> {
  return executor.selectFrom('experiment_templates').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function listTemplates(executor: Executor, workspaceId: string, page: PageParams) {
  return paginate(executor.selectFrom('experiment_templates').selectAll().where('workspace_id', '=', workspaceId), 'id', page, toTemplate);
}

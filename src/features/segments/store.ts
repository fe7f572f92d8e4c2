import type { Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { SegmentsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import { collectSegmentKeys } from '../assignment/audience.js';
import { listExperimentAudiences } from '../experiments/read.js';
import { parseRule, type SegmentRow } from './read.js';

export function toSegment(row: SegmentRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    key: row.key,
    name: row.name,
    description: row.description,
    rule: parseRule(row.rule),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertSegment(executor: Executor, row: SegmentRow): Promise<void> {
  await executor.insertInto('segments').values(row).execute();
}

export async function updateSegment(executor: Executor, workspaceId: string, id: string, changes: Updateable<SegmentsTable>): Promise<void> {
  await executor.updateTable('segments').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function deleteSegment(executor: Executor, workspaceId: string, id: string): Promise<void> {
  await executor.deleteFrom('segments').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function findSegment(executor: Executor, workspaceId: string, id: string): Promise<SegmentRow | undefined> {
  return executor.selectFrom('segments').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

export async function segmentKeyTaken(executor: Executor, workspaceId: string, key: string): Promise<boolean> {
  const row = await executor.selectFrom('segments').select('id').where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
  return row !== undefined;
}

export async function listSegments(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('segments').selectAll().where('workspace_id', '=', workspaceId);
  return paginate(query, 'id', page, toSegment);
}

export interface SegmentReferrer {
  type: 'segment' | 'experiment';
  id: string;
  key: string;
}

/** Segments and non-archived experiments whose rule or audience refers to segment `key` directly. */
export async function findSegmentReferrers(executor: Executor, workspaceId: string, key: string): Promise<SegmentReferrer[]> {
  const segments = await executor.selectFrom('segments').select(['id', 'key', 'rule']).where('workspace_id', '=', workspaceId).orderBy('id').execute();
  const experiments = await listExperimentAudiences(executor, workspaceId);
  const refersToKey = (text: string | null) => text !== null && collectSegmentKeys(parseRule(text)).includes(key);
  return [
    ...segments.filter((row) => row.key !== key && refersToKey(row.rule)).map((row) => ({ type: 'segment' as const, id: row.id, key: row.key })),
    ...experiments.filter((row) => refersToKey(row.audience)).map((row) => ({ type: 'experiment' as const, id: row.id, key: row.key })),
  ];
}

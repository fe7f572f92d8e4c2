/** The segments slice's read model: the rules audience evaluation resolves `{segment}` against, and the write lock experiments take. */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { SegmentsTable } from '../../db/tables/catalogue.js';
import type { AudienceExpression } from '../assignment/audience.js';

export type SegmentRow = Selectable<SegmentsTable>;

/** Rules are stored as JSON text; a segment with no rule is stored as `null` and matches everyone. */
export function parseRule(text: string): AudienceExpression | null {
  return JSON.parse(text) as AudienceExpression | null;
}

/**
 * Serialises segment writes of one workspace until the transaction ends, so two concurrent saves
 * cannot each pass the cycle check against the other's old rule, nor a delete race a new
 * reference. A no-op update takes the workspace row lock on PostgreSQL; on SQLite every write
 * transaction already holds the database lock (BEGIN IMMEDIATE). Works the same on both.
 */
export async function lockSegmentsOf(executor: Executor, workspaceId: string): Promise<void> {
  await executor
    .updateTable('workspaces')
    .set((eb) => ({ name: eb.ref('name') }))
    .where('id', '=', workspaceId)
    .execute();
}

/** Every segment rule of the workspace by key: what audience evaluation resolves `{segment}` against. */
export async function loadSegmentRules(executor: Executor, workspaceId: string): Promise<Map<string, AudienceExpression | null>> {
  const rows = await executor.selectFrom('segments').select(['key', 'rule']).where('workspace_id', '=', workspaceId).execute();
  return new Map(rows.map((row) => [row.key, parseRule(row.rule)]));
}

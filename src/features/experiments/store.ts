import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { ExperimentStatus } from '../../db/tables/experiments.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { ULID_PATTERN } from '../../lib/ids.js';
import { toExperiment, type ExperimentRow } from './read.js';
import { pageByName } from './by-name.js';
import { pageByRecentChange } from './recently-changed.js';

export async function insertExperiment(executor: Executor, row: ExperimentRow): Promise<void> {
  await executor.insertInto('experiments').values(row).execute();
}

export async function updateExperiment(executor: Executor, id: string, changes: Partial<ExperimentRow>): Promise<void> {
  await executor.updateTable('experiments').set(changes).where('id', '=', id).execute();
}

export interface ExperimentFilter {
  status?: ExperimentStatus | undefined;
  /** Text the name or the key contains, in any case. */
  q?: string | undefined;
  order?: 'oldest' | 'newest' | 'updated' | 'name' | undefined;
  /** Tags every experiment listed has (normalized). */
  tags?: string[] | undefined;
  /** A person's id, or an owner's name in any case. */
  owner?: string | undefined;
}

/** "50%_off" as a LIKE pattern that matches those characters literally: "%50\%\_off%". */
function containsPattern(text: string): string {
  return likePattern(text.toLowerCase());
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listExperiments(executor: Executor, seam: DialectSeam, workspaceId: string, filter: ExperimentFilter, page: PageParams) {
  let query = executor.selectFrom('experiments').selectAll().where('workspace_id', '=', workspaceId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.q) {
    const pattern = containsPattern(filter.q);
    query = query.where(sql<boolean>`(lower(name) like ${pattern} escape '\\' or lower(key) like ${pattern} escape '\\')`);
  }
  // Tags hold no quote or backslash (labels.ts), so `"tag"` in the stored JSON array is exactly that tag.
  for (const tag of filter.tags ?? []) query = query.where(sql<boolean>`tags like ${likePattern(`"${tag}"`)} escape '\\'`);
  if (filter.owner) {
    const owner = filter.owner.trim();
    query = ULID_PATTERN.test(owner) ? query.where('owner_user_id', '=', owner) : query.where(sql<boolean>`lower(owner_name) = ${owner.toLowerCase()}`);
  }
  if (filter.order === 'updated') return pageByRecentChange(query, page, toExperiment);
  if (filter.order === 'name') return pageByName(seam, query, page, toExperiment);
  return paginate(query, 'id', page, toExperiment, filter.order === 'newest' ? 'desc' : 'asc');
}

import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MetricsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';

export type MetricRow = Selectable<MetricsTable>;

export function toMetric(row: MetricRow) {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    key: row.key,
    name: row.name,
    event_key: row.event_key,
    kind: row.kind,
    aggregation: row.aggregation,
    unit_dedup_window: row.unit_dedup_window,
    property_path: row.property_path,
    created_at: toIso(row.created_at),
  };
}

export async function insertMetric(executor: Executor, row: MetricRow): Promise<void> {
  await executor.insertInto('metrics').values(row).execute();
}

export async function findMetric(executor: Executor, workspaceId: string, id: string): Promise<MetricRow | undefined> {
  return executor.selectFrom('metrics').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/**
 * The workspace's metrics among `ids`, in the order of `ids` (repeats collapsed); ids that name
 * no metric of this workspace are simply absent, so a caller compares lengths to find them.
 */
export async function findMetricsByIds(executor: Executor, workspaceId: string, ids: readonly string[]): Promise<MetricRow[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const rows = await executor.selectFrom('metrics').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', wanted).execute();
  const byId = new Map(rows.map((row) => [row.id, row]));
  return wanted.flatMap((id) => {
    const row = byId.get(id);
    return row ? [row] : [];
  });
}

export async function listMetrics(executor: Executor, workspaceId: string, page: PageParams) {
  const query = executor.selectFrom('metrics').selectAll().where('workspace_id', '=', workspaceId);
  return paginate(query, 'id', page, toMetric);
}

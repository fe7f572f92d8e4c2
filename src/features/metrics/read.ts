/** The metrics slice's read model: what the experiments and analysis slices may know of a metric. */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MetricsTable } from '../../db/tables/catalogue.js';
import type { MetricCapping } from './schemas.js';

export type MetricRow = Selectable<MetricsTable>;

export function cappingOf(row: Pick<MetricRow, 'capping'>): MetricCapping | null {
  return row.capping === null ? null : (JSON.parse(row.capping) as MetricCapping);
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

import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MetricsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import type { Metric, MetricCapping } from './schemas.js';

export type MetricRow = Selectable<MetricsTable>;

export function cappingOf(row: Pick<MetricRow, 'capping'>): MetricCapping | null {
  return row.capping === null ? null : (JSON.parse(row.capping) as MetricCapping);
}

export function toMetric(row: MetricRow): Metric {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    key: row.key,
    name: row.name,
    description: row.description,
    event_key: row.kind === 'ratio' ? null : row.event_key,
    kind: row.kind,
    aggregation: row.aggregation,
    higher_is_better: row.higher_is_better === 1,
    capping: cappingOf(row),
    numerator_metric_id: row.numerator_metric_id,
    denominator_metric_id: row.denominator_metric_id,
    unit_dedup_window: row.unit_dedup_window,
    property_path: row.property_path,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function insertMetric(executor: Executor, row: MetricRow): Promise<void> {
  await executor.insertInto('metrics').values(row).execute();
}

export async function updateMetric(executor: Executor, workspaceId: string, id: string, values: Updateable<MetricsTable>): Promise<void> {
  await executor.updateTable('metrics').set(values).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export async function deleteMetric(executor: Executor, workspaceId: string, id: string): Promise<void> {
  await executor.deleteFrom('metrics').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
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

export interface MetricReferrer {
  type: 'experiment' | 'metric';
  id: string;
  key: string;
}

/**
 * What keeps a metric from being deleted: draft or running experiments that use it as primary or
 * guardrail metric, and ratio metrics built on it. Stopped and archived experiments keep their
 * snapshots, which name the metric by id and key, so they do not hold it.
 */
export async function findMetricReferrers(executor: Executor, workspaceId: string, id: string): Promise<MetricReferrer[]> {
  const experiments = await executor
    .selectFrom('experiments')
    .select(['id', 'key', 'primary_metric_id', 'guardrail_metric_ids'])
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', ['draft', 'running'])
    // A cheap prefilter; the JSON array is checked exactly below.
    .where((eb) => eb.or([eb('primary_metric_id', '=', id), eb('guardrail_metric_ids', 'like', `%${id}%`)]))
    .orderBy('id')
    .execute();
  const ratios = await executor
    .selectFrom('metrics')
    .select(['id', 'key'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('numerator_metric_id', '=', id), eb('denominator_metric_id', '=', id)]))
    .orderBy('id')
    .execute();
  const uses = (row: (typeof experiments)[number]) =>
    row.primary_metric_id === id || (JSON.parse(row.guardrail_metric_ids) as string[]).includes(id);
  return [
    ...experiments.filter(uses).map((row) => ({ type: 'experiment' as const, id: row.id, key: row.key })),
    ...ratios.map((row) => ({ type: 'metric' as const, id: row.id, key: row.key })),
  ];
}

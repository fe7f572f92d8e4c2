import type { Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { MetricsTable } from '../../db/tables/catalogue.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { toIso } from '../../lib/time.js';
import { findExperimentsUsingMetric } from '../experiments/read.js';
import { cappingOf, type MetricRow } from './read.js';
import type { Metric } from './schemas.js';

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
    unit: row.unit,
    ...(row.kind === 'quantile' ? { quantile: row.quantile ?? 0.5, quantile_level: row.quantile_level ?? 'event' } : {}),
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
  const experiments = await findExperimentsUsingMetric(executor, workspaceId, id);
  const ratios = await executor
    .selectFrom('metrics')
    .select(['id', 'key'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('numerator_metric_id', '=', id), eb('denominator_metric_id', '=', id)]))
    .orderBy('id')
    .execute();
  return [
    ...experiments.map((row) => ({ type: 'experiment' as const, id: row.id, key: row.key })),
    ...ratios.map((row) => ({ type: 'metric' as const, id: row.id, key: row.key })),
  ];
}

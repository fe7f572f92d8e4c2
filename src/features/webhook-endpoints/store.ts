import type { Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import type { OutboundDeliveryStatus, WebhookEndpointDeliveriesTable, WebhookEndpointsTable } from '../../db/tables/outbound.js';
import { paginate, type PageParams } from '../../http/pagination.js';
import { previousSecretExpiry } from '../../lib/rotating-secret.js';
import { toIso, toIsoOrNull } from '../../lib/time.js';
import type { EndpointDelivery, WebhookEndpoint } from './schemas.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type EndpointDeliveryRow = Selectable<WebhookEndpointDeliveriesTable>;

export interface ExperimentRef {
  id: string;
  key: string;
  name: string;
}
export type ExperimentRefs = ReadonlyMap<string, ExperimentRef>;
const NO_REFS: ExperimentRefs = new Map();

/** The experiment ids an endpoint is limited to, or null for every experiment. */
export function experimentFilterOf(row: Pick<WebhookEndpointRow, 'experiment_ids'>): string[] | null {
  return row.experiment_ids === null ? null : (JSON.parse(row.experiment_ids) as string[]);
}

/** The workspace's experiments among `ids`, by id: what a filter or a delivery shows by name. */
export async function experimentRefs(executor: Executor, workspaceId: string, ids: Iterable<string>): Promise<ExperimentRefs> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return NO_REFS;
  const rows = await executor
    .selectFrom('experiments')
    .select(['id', 'key', 'name'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', wanted)
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** The API shape; the previous secret's expiry is shown only while that secret still signs. */
export function toWebhookEndpoint(row: WebhookEndpointRow, now: number, refs: ExperimentRefs = NO_REFS): WebhookEndpoint {
  const experimentIds = experimentFilterOf(row);
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    url: row.url_masked,
    description: row.description,
    event_types: JSON.parse(row.event_types) as string[],
    enabled: row.enabled === 1,
    format: row.format,
    previous_secret_expires_at: previousSecretExpiry(row, now),
    failing_since: toIsoOrNull(row.failing_since),
    disabled_reason: row.disabled_reason,
    experiment_ids: experimentIds,
    experiments: (experimentIds ?? []).flatMap((id) => {
      const ref = refs.get(id);
      return ref ? [ref] : [];
    }),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toEndpointDelivery(row: EndpointDeliveryRow, refs: ExperimentRefs = NO_REFS): EndpointDelivery {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    experiment: (row.experiment_id && refs.get(row.experiment_id)) || null,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    last_error: row.last_error,
    next_attempt_at: toIsoOrNull(row.next_attempt_at),
    created_at: toIso(row.created_at),
    delivered_at: toIsoOrNull(row.delivered_at),
  };
}

export async function insertEndpoint(executor: Executor, row: WebhookEndpointRow): Promise<void> {
  await executor.insertInto('webhook_endpoints').values(row).execute();
}

export async function updateEndpoint(executor: Executor, id: string, changes: Updateable<WebhookEndpointsTable>): Promise<void> {
  await executor.updateTable('webhook_endpoints').set(changes).where('id', '=', id).execute();
}

export async function deleteEndpoint(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('webhook_endpoint_deliveries').where('endpoint_id', '=', id).execute();
  await executor.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
}

export async function findEndpoint(executor: Executor, workspaceId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  return executor.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
}

/** The endpoint by id alone (the delivery job acts for no caller), locked until the transaction ends when a seam is given. */
export async function lockEndpointById(executor: Executor, seam: DialectSeam, id: string): Promise<WebhookEndpointRow | undefined> {
  return seam.forUpdate(executor.selectFrom('webhook_endpoints').selectAll().where('id', '=', id)).executeTakeFirst();
}

export async function lockEndpoint(executor: Executor, seam: DialectSeam, workspaceId: string, id: string): Promise<WebhookEndpointRow | undefined> {
  const query = executor.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id);
  return seam.forUpdate(query).executeTakeFirst();
}

export async function countEndpoints(executor: Executor, workspaceId: string): Promise<number> {
  const row = await executor
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<string | number>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

export async function listEndpoints(executor: Executor, workspaceId: string, page: PageParams, now: number) {
  const query = executor.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId);
  const rows = await paginate(query, 'id', page, (row) => row);
  const refs = await experimentRefs(
    executor,
    workspaceId,
    rows.data.flatMap((row) => experimentFilterOf(row) ?? []),
  );
  return { ...rows, data: rows.data.map((row) => toWebhookEndpoint(row, now, refs)) };
}

/** The workspace's enabled endpoints: the candidates for an event. */
export async function listEnabledEndpoints(executor: Executor, workspaceId: string): Promise<WebhookEndpointRow[]> {
  return executor.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('enabled', '=', 1).orderBy('id').execute();
}

export async function insertDelivery(executor: Executor, row: EndpointDeliveryRow): Promise<void> {
  await executor.insertInto('webhook_endpoint_deliveries').values(row).execute();
}

export async function findDeliveryById(executor: Executor, id: string): Promise<EndpointDeliveryRow | undefined> {
  return executor.selectFrom('webhook_endpoint_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockDelivery(executor: Executor, seam: DialectSeam, endpointId: string, id: string): Promise<EndpointDeliveryRow | undefined> {
  const query = executor.selectFrom('webhook_endpoint_deliveries').selectAll().where('endpoint_id', '=', endpointId).where('id', '=', id);
  return seam.forUpdate(query).executeTakeFirst();
}

/**
 * Records an attempt only if the delivery is still where the attempt found it (pending, with one
 * attempt fewer): a second worker running the same attempt (a lease that lapsed) records nothing.
 */
export async function recordAttempt(
  executor: Executor,
  id: string,
  previousAttempts: number,
  changes: Updateable<WebhookEndpointDeliveriesTable>,
): Promise<boolean> {
  const result = await executor
    .updateTable('webhook_endpoint_deliveries')
    .set(changes)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('attempts', '=', previousAttempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function updateDelivery(executor: Executor, id: string, changes: Updateable<WebhookEndpointDeliveriesTable>): Promise<void> {
  await executor.updateTable('webhook_endpoint_deliveries').set(changes).where('id', '=', id).execute();
}

/** Pending deliveries of an endpoint fail at once when it is disabled. */
export async function failPendingDeliveries(executor: Executor, endpointId: string, reason: string, now: number): Promise<void> {
  await executor
    .updateTable('webhook_endpoint_deliveries')
    .set({ status: 'failed', last_error: reason, next_attempt_at: null, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute();
}

export async function listDeliveries(
  executor: Executor,
  workspaceId: string,
  endpointId: string,
  status: OutboundDeliveryStatus | undefined,
  page: PageParams,
) {
  let query = executor.selectFrom('webhook_endpoint_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (status) query = query.where('status', '=', status);
  const rows = await paginate(query, 'id', page, (row) => row, 'desc');
  const refs = await experimentRefs(
    executor,
    workspaceId,
    rows.data.flatMap((row) => (row.experiment_id ? [row.experiment_id] : [])),
  );
  return { ...rows, data: rows.data.map((row) => toEndpointDelivery(row, refs)) };
}

import { encodeTime } from 'ulid';
import type { OutsideEventStore } from '../../buffer/types.js';
import type { Db, Executor } from '../../db/database.js';
import { recordAudit } from '../audit/recorder.js';

/**
 * Event retention (VERDICT_EVENT_RETENTION_DAYS). Removes, per workspace:
 * - raw events that occurred before the cutoff (now - retention) and that no experiment still
 *   counting can read: a running experiment, or one stopped within the retention period (its
 *   final snapshot may still be computed or recomputed), reads events from its start minus its
 *   CUPED lookback, so the cutoff never passes the earliest such start;
 * - exposures of experiments archived before the cutoff (an archived experiment never changes
 *   again, so its updated_at is when it was archived).
 *
 * Deletes go in small batches, one short transaction each, with a pause between them, so ingest
 * (the drainer's inserts into `events`) never waits behind a long delete. The slice reads the
 * events and experiment tables directly: retention is maintenance across slices, not a feature of
 * one. Snapshots (and any rollups) are left alone: results already computed stay readable.
 *
 * With events kept outside the primary database (ClickHouse, VERDICT_CLICKHOUSE_URL: the event
 * storage's `outside` store), the same events go from there too (one lightweight DELETE per
 * workspace), and so does its copy of the purged exposures. That store is not in the primary
 * database's transaction: the audit entry is brought up to date right after each delete there.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
export const RETENTION_BATCH_SIZE = 1000;
/** Pause between batches, so writers waiting for the database get their turn. */
const PAUSE_MS = 10;

export interface PurgeDeps {
  db: Db;
  retentionDays: number;
  now: number;
  batchSize?: number;
  signal?: AbortSignal;
  /** Where events live outside the primary database (their exposures are copied there too); null or absent: the primary database alone. */
  outside?: OutsideEventStore | null;
}

export interface WorkspacePurge {
  workspace_id: string;
  events_removed: number;
  events_before: string;
  exposures_removed: number;
  experiments: string[];
}

interface ProtectingExperiment {
  started_at: number | null;
  variance_reduction: string | null;
}

function lookbackDays(varianceReduction: string | null): number {
  if (!varianceReduction) return 0;
  const parsed = JSON.parse(varianceReduction) as { method?: string; lookback_days?: number } | null;
  return parsed?.method === 'cuped' ? (parsed.lookback_days ?? 0) : 0;
}

/** The time before which a workspace's events may go: the cutoff, or earlier if an experiment still reads them. */
export async function eventsPurgeBefore(db: Executor, workspaceId: string, cutoff: number): Promise<number> {
  const counting: ProtectingExperiment[] = await db
    .selectFrom('experiments')
    .select(['started_at', 'variance_reduction'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('status', '=', 'running'), eb.and([eb('status', '=', 'stopped'), eb('stopped_at', '>=', cutoff)])]))
    .execute();
  let before = cutoff;
  for (const experiment of counting) {
    if (experiment.started_at === null) continue;
    before = Math.min(before, Number(experiment.started_at) - lookbackDays(experiment.variance_reduction) * DAY_MS);
  }
  return before;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));

/**
 * The audit entry of one workspace's purge: written with the first batch that removes something,
 * and brought up to date in the transaction of every later batch, so it always says exactly what
 * the committed batches removed.
 */
class PurgeAudit {
  #entryId: string | null = null;
  constructor(
    readonly summary: WorkspacePurge,
    private readonly retentionDays: number,
    private readonly at: number,
  ) {}

  async record(trx: Executor): Promise<void> {
    const payload = { retention_days: this.retentionDays, ...this.summary };
    if (this.#entryId) {
      await trx
        .updateTable('audit_entries')
        .set({ payload: JSON.stringify(payload) })
        .where('id', '=', this.#entryId)
        .execute();
      return;
    }
    await recordAudit(trx, {
      workspaceId: this.summary.workspace_id,
      actorId: null,
      action: 'retention.purged',
      targetType: 'workspace',
      targetId: this.summary.workspace_id,
      payload,
      at: this.at,
    });
    const entry = await trx
      .selectFrom('audit_entries')
      .select('id')
      .where('workspace_id', '=', this.summary.workspace_id)
      .where('action', '=', 'retention.purged')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    this.#entryId = entry.id;
  }
}

/** Deletes one batch in its own transaction; returns how many rows went. */
async function deleteBatch(db: Db, audit: PurgeAudit, remove: (trx: Executor) => Promise<number>, count: (removed: number) => void): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const removed = await remove(trx);
    if (removed > 0) {
      count(removed);
      await audit.record(trx);
    }
    return removed;
  });
}

async function purgeEvents(deps: PurgeDeps, audit: PurgeAudit, before: number): Promise<void> {
  const batchSize = deps.batchSize ?? RETENTION_BATCH_SIZE;
  // Event ids are ULIDs minted on receipt: ids below this bound were received before `before`,
  // so the scan walks the primary key; occurred_at decides (a late event received after the
  // bound waits for a later run).
  const idBound = encodeTime(Math.max(0, before), 10) + '0'.repeat(16);
  const workspaceId = audit.summary.workspace_id;
  for (;;) {
    if (deps.signal?.aborted) return;
    const removed = await deleteBatch(
      deps.db,
      audit,
      async (trx) => {
        const doomed = trx
          .selectFrom('events')
          .select('id')
          .where('id', '<', idBound)
          .where('workspace_id', '=', workspaceId)
          .where('occurred_at', '<', before)
          .limit(batchSize);
        const result = await trx.deleteFrom('events').where('id', 'in', doomed).executeTakeFirst();
        return Number(result.numDeletedRows);
      },
      (n) => (audit.summary.events_removed += n),
    );
    if (removed < batchSize) return;
    await pause();
  }
}

async function purgeExposures(deps: PurgeDeps, audit: PurgeAudit, experimentId: string): Promise<void> {
  const batchSize = deps.batchSize ?? RETENTION_BATCH_SIZE;
  for (;;) {
    if (deps.signal?.aborted) return;
    const removed = await deleteBatch(
      deps.db,
      audit,
      async (trx) => {
        const doomed = trx.selectFrom('exposures').select('id').where('experiment_id', '=', experimentId).limit(batchSize);
        const result = await trx.deleteFrom('exposures').where('id', 'in', doomed).executeTakeFirst();
        return Number(result.numDeletedRows);
      },
      (n) => {
        audit.summary.exposures_removed += n;
        if (!audit.summary.experiments.includes(experimentId)) audit.summary.experiments.push(experimentId);
      },
    );
    if (removed < batchSize) return;
    await pause();
  }
}

/** Removes from the store outside the primary database what `remove` deletes there and records it in the audit entry. */
async function purgeOutside(deps: PurgeDeps, audit: PurgeAudit, remove: (outside: OutsideEventStore) => Promise<number>, count: (removed: number) => void) {
  if (!deps.outside || deps.signal?.aborted) return;
  const removed = await remove(deps.outside);
  if (removed === 0) return;
  count(removed);
  await deps.db.transaction().execute((trx) => audit.record(trx));
}

/** Purges every workspace; returns what each one lost (workspaces that lost nothing are left out). */
export async function purgeExpiredEvents(deps: PurgeDeps): Promise<WorkspacePurge[]> {
  const cutoff = deps.now - deps.retentionDays * DAY_MS;
  const workspaces = await deps.db.selectFrom('workspaces').select('id').orderBy('id').execute();
  const results: WorkspacePurge[] = [];
  for (const { id } of workspaces) {
    if (deps.signal?.aborted) break;
    const before = await eventsPurgeBefore(deps.db, id, cutoff);
    const summary: WorkspacePurge = {
      workspace_id: id,
      events_removed: 0,
      events_before: new Date(before).toISOString(),
      exposures_removed: 0,
      experiments: [],
    };
    const audit = new PurgeAudit(summary, deps.retentionDays, deps.now);
    await purgeEvents(deps, audit, before);
    await purgeOutside(
      deps,
      audit,
      (outside) => outside.deleteEvents(id, before),
      (n) => (summary.events_removed += n),
    );
    const archived = await deps.db
      .selectFrom('experiments')
      .select('id')
      .where('workspace_id', '=', id)
      .where('status', '=', 'archived')
      .where('updated_at', '<', cutoff)
      .orderBy('id')
      .execute();
    for (const experiment of archived) {
      await purgeExposures(deps, audit, experiment.id);
      // The copy counts nothing more than the rows above: the audit says what the primary database lost.
      await purgeOutside(
        deps,
        audit,
        (outside) => outside.deleteExposureCopy(experiment.id),
        () => undefined,
      );
    }
    if (summary.events_removed > 0 || summary.exposures_removed > 0) results.push(summary);
  }
  return results;
}

import type { Tx } from '../../db/database.js';
import type { WriteTask } from '../../db/write-tasks.js';
import { newId } from '../../lib/ids.js';
import { claimMutex, findAssignment, insertAssignments, insertFirstExposures, type AssignmentRow, type CachedAssignment } from './store.js';

/** One first assignment to store: plain data, so it can be handed to the writer thread. */
export interface FirstAssignmentWrite {
  workspaceId: string;
  experimentId: string;
  mutexGroupId: string | null;
  unitId: string;
  variantKey: string;
  logExposure: boolean;
  /** The experiment's dimension values from the context (JSON), or null. */
  dimensionValues: string | null;
  /** The API key that asked, recorded as the exposure's source. */
  sourceKeyId: string | null;
}

/** What the assigner keeps of a stored assignment. */
export type StoredAssignment = CachedAssignment;

export interface FirstAssignmentsInput {
  items: FirstAssignmentWrite[];
  now: number;
}

const pairKey = (experimentId: string, unitId: string) => `${experimentId}\u0000${unitId}`;

/**
 * Stores a group of first assignments in the caller's transaction: mutex claims one by one, then
 * every assignment in multi-row statements, then the exposures of the rows that were stored; a
 * lost race answers the row stored first. Everything goes in (unit, experiment) order, so
 * concurrent groups on other processes take row locks in the same order and cannot deadlock each
 * other. Requests for the same new pair share one row. Returns one result per item, in order.
 *
 * A write task: on SQLite it runs on the event buffer's writer thread (db/write-tasks.ts), so
 * its statements, its commit's fsync and any WAL checkpoint the commit runs never hold the API's
 * event loop.
 */
export const writeFirstAssignments: WriteTask<FirstAssignmentsInput, StoredAssignment[]> = Object.assign(
  async (trx: Tx, { items, now }: FirstAssignmentsInput): Promise<StoredAssignment[]> => {
    const rows = new Map<string, AssignmentRow>();
    const sources = new Map<string, string | null>();
    for (const item of [...items].sort(compareFirst)) {
      const key = pairKey(item.experimentId, item.unitId);
      if (rows.has(key)) continue;
      rows.set(key, await firstRow(trx, item, now));
      sources.set(key, item.sourceKeyId);
    }
    const stored = await insertAssignments(trx, [...rows.values()]);
    const exposed = [...rows.entries()].filter(([, row]) => stored.has(row.id) && row.exposure_logged_at !== null && row.variant_key !== null);
    await insertFirstExposures(
      trx,
      exposed.map(([key, row]) => ({
        workspace_id: row.workspace_id,
        experiment_id: row.experiment_id,
        unit_id: row.unit_id,
        variant_key: row.variant_key as string,
        exposed_at: now,
        source: 'assign' as const,
        source_key_id: sources.get(key) ?? null,
      })),
    );
    const results = new Map<string, StoredAssignment>();
    for (const [key, row] of rows) {
      const kept = stored.has(row.id) ? row : ((await findAssignment(trx, row.experiment_id, row.unit_id)) as AssignmentRow);
      results.set(key, { id: kept.id, variant_key: kept.variant_key, reason: kept.reason, exposure_logged_at: kept.exposure_logged_at });
    }
    return items.map((item) => results.get(pairKey(item.experimentId, item.unitId)) as StoredAssignment);
  },
  { writerTask: 'assignment.first-writes' },
);

/** The row a first assignment would store, after claiming the unit in the mutex group (or holding it out). */
async function firstRow(trx: Tx, item: FirstAssignmentWrite, now: number): Promise<AssignmentRow> {
  const holdout = item.mutexGroupId ? !(await claimMutex(trx, item.mutexGroupId, item.unitId, item.experimentId, now)) : false;
  return {
    id: newId(),
    workspace_id: item.workspaceId,
    experiment_id: item.experimentId,
    unit_id: item.unitId,
    variant_key: holdout ? null : item.variantKey,
    reason: holdout ? 'mutex_holdout' : 'bucketed',
    exposure_logged_at: item.logExposure && !holdout ? now : null,
    created_at: now,
    dimension_values: item.dimensionValues,
  };
}

function compareFirst(a: FirstAssignmentWrite, b: FirstAssignmentWrite): number {
  if (a.unitId !== b.unitId) return a.unitId < b.unitId ? -1 : 1;
  return a.experimentId < b.experimentId ? -1 : a.experimentId > b.experimentId ? 1 : 0;
}

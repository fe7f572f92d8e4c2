import type { CompiledQuery, Selectable } from 'kysely';
import { BulkInsert } from '../../db/bulk-insert.js';
import type { Db, Executor, Tx } from '../../db/database.js';
import type { SideReads } from '../../db/side-reads.js';
import type { AssignmentsTable, ExposuresTable } from '../../db/tables/experiments.js';
import { newId } from '../../lib/ids.js';

export type AssignmentRow = Selectable<AssignmentsTable>;
type ExposureRow = Selectable<ExposuresTable>;

const insertAssignmentRows = new BulkInsert<AssignmentRow>(
  ['id', 'workspace_id', 'experiment_id', 'unit_id', 'variant_key', 'reason', 'exposure_logged_at', 'created_at', 'dimension_values'],
  (executor, rows) =>
    executor
      .insertInto('assignments')
      .values(rows)
      .onConflict((oc) => oc.columns(['experiment_id', 'unit_id']).doNothing())
      .returning('id'),
);

const insertExposureRows = new BulkInsert<ExposureRow>(
  ['id', 'workspace_id', 'experiment_id', 'unit_id', 'variant_key', 'exposed_at', 'superseded_at', 'source', 'source_key_id'],
  (executor, rows) =>
    executor
      .insertInto('exposures')
      .values(rows)
      .onConflict((oc) => oc.columns(['experiment_id', 'unit_id']).where('superseded_at', 'is', null).doNothing()),
);

/**
 * Inserts first assignments (at most one per experiment and unit), several per statement, and
 * returns the ids of the rows stored; a row missing from the answer lost to one stored earlier.
 */
export async function insertAssignments(trx: Tx, rows: readonly AssignmentRow[]): Promise<Set<string>> {
  const stored = await insertAssignmentRows.execute<{ id: string }>(trx, rows);
  return new Set(stored.map((row) => row.id));
}

/** Records the live exposures of first assignments; a pair's second one is ignored (the partial unique index keeps one). */
export async function insertFirstExposures(trx: Tx, rows: ReadonlyArray<Omit<ExposureRow, 'id' | 'superseded_at'>>): Promise<void> {
  await insertExposureRows.execute(
    trx,
    rows.map((row) => ({ ...row, id: newId(), superseded_at: null })),
  );
}

export async function findAssignment(executor: Executor, experimentId: string, unitId: string): Promise<AssignmentRow | undefined> {
  return executor.selectFrom('assignments').selectAll().where('experiment_id', '=', experimentId).where('unit_id', '=', unitId).executeTakeFirst();
}

/** What the sticky cache keeps of a stored assignment: every other column would only cost memory. */
export type CachedAssignment = Pick<AssignmentRow, 'id' | 'variant_key' | 'reason' | 'exposure_logged_at'>;

/** Reads a stored assignment through the side connection (db/side-reads.ts): a sticky-cache miss. */
export type AssignmentLookup = (experimentId: string, unitId: string) => Promise<CachedAssignment | undefined>;

/**
 * The lookup of a sticky-cache miss, its query compiled once when the lookup is made, not per
 * miss: building and compiling the query was most of the garbage a miss made (a miss rate of 80%
 * at 2,000 assigns/s in bench:soak).
 */
export function assignmentLookup(db: Db, reads: SideReads): AssignmentLookup {
  const template: CompiledQuery<CachedAssignment> = db
    .selectFrom('assignments')
    .select(['id', 'variant_key', 'reason', 'exposure_logged_at'])
    .where('experiment_id', '=', '')
    .where('unit_id', '=', '')
    .compile();
  return (experimentId, unitId) => reads.first({ ...template, parameters: [experimentId, unitId] });
}

/**
 * Claims the unit for the experiment in its mutex group unless another experiment of the group
 * already has it. The primary key on (group, unit) makes the first claim win, on any process.
 */
export async function claimMutex(trx: Tx, mutexGroupId: string, unitId: string, experimentId: string, now: number): Promise<boolean> {
  await trx
    .insertInto('mutex_claims')
    .values({ mutex_group_id: mutexGroupId, unit_id: unitId, experiment_id: experimentId, created_at: now })
    .onConflict((oc) => oc.columns(['mutex_group_id', 'unit_id']).doNothing())
    .execute();
  const claim = await trx
    .selectFrom('mutex_claims')
    .select('experiment_id')
    .where('mutex_group_id', '=', mutexGroupId)
    .where('unit_id', '=', unitId)
    .executeTakeFirstOrThrow();
  return claim.experiment_id === experimentId;
}

/** Records the live exposure of a pair; a second one is ignored (the partial unique index keeps one). */
export async function insertExposure(
  executor: Executor,
  exposure: {
    workspaceId: string;
    experimentId: string;
    unitId: string;
    variantKey: string;
    at: number;
    source: 'assign' | 'api' | 'warehouse';
    sourceKeyId: string | null;
  },
): Promise<boolean> {
  const result = await executor
    .insertInto('exposures')
    .values({
      id: newId(),
      workspace_id: exposure.workspaceId,
      experiment_id: exposure.experimentId,
      unit_id: exposure.unitId,
      variant_key: exposure.variantKey,
      exposed_at: exposure.at,
      superseded_at: null,
      source: exposure.source,
      source_key_id: exposure.sourceKeyId,
    })
    .onConflict((oc) => oc.columns(['experiment_id', 'unit_id']).where('superseded_at', 'is', null).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function markExposureLogged(executor: Executor, assignmentId: string, at: number): Promise<void> {
  await executor.updateTable('assignments').set({ exposure_logged_at: at }).where('id', '=', assignmentId).where('exposure_logged_at', 'is', null).execute();
}

export async function listUnitAssignments(executor: Executor, workspaceId: string, unitId: string) {
  return executor
    .selectFrom('assignments')
    .innerJoin('experiments', 'experiments.id', 'assignments.experiment_id')
    .select(['assignments.id', 'assignments.variant_key', 'assignments.reason', 'assignments.exposure_logged_at', 'experiments.key as experiment_key'])
    .where('assignments.workspace_id', '=', workspaceId)
    .where('assignments.unit_id', '=', unitId)
    .orderBy('assignments.id')
    .execute();
}

/** Forced re-bucket: the assignment goes and the pair's live exposures are marked superseded. */
export async function deleteAssignmentAndSupersede(trx: Tx, experimentId: string, unitId: string, now: number) {
  const removed = await trx.deleteFrom('assignments').where('experiment_id', '=', experimentId).where('unit_id', '=', unitId).returningAll().executeTakeFirst();
  if (!removed) return null;
  const superseded = await trx
    .updateTable('exposures')
    .set({ superseded_at: now })
    .where('experiment_id', '=', experimentId)
    .where('unit_id', '=', unitId)
    .where('superseded_at', 'is', null)
    .executeTakeFirst();
  return { removed, supersededExposures: Number(superseded.numUpdatedRows) };
}

export async function upsertOverride(trx: Tx, row: { experiment_id: string; unit_id: string; workspace_id: string; variant_key: string; created_at: number }) {
  await trx
    .insertInto('experiment_overrides')
    .values(row)
    .onConflict((oc) => oc.columns(['experiment_id', 'unit_id']).doUpdateSet({ variant_key: row.variant_key, created_at: row.created_at }))
    .execute();
}

export async function deleteOverride(trx: Tx, experimentId: string, unitId: string): Promise<string | null> {
  const removed = await trx
    .deleteFrom('experiment_overrides')
    .where('experiment_id', '=', experimentId)
    .where('unit_id', '=', unitId)
    .returning('variant_key')
    .executeTakeFirst();
  return removed?.variant_key ?? null;
}

export async function loadOverrides(executor: Executor, experimentId: string): Promise<Map<string, string>> {
  const rows = await executor.selectFrom('experiment_overrides').select(['unit_id', 'variant_key']).where('experiment_id', '=', experimentId).execute();
  return new Map(rows.map((row) => [row.unit_id, row.variant_key]));
}

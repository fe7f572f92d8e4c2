/**
 * Where an incremental refresh keeps each unit's settled counts and sums (migration 0043): one
 * row per experiment, state key and exposed unit, and per experiment and state key the time
 * below which they are settled. A refresh writes its new state in one transaction, and only if
 * no other refresh of the same state committed since it read (the other's state is as good).
 */
import type { Db, Executor } from '../../../db/database.js';
import { emptyParts, PERIODS, type UnitParts } from './unit-values.js';

export interface StoredUnit {
  exposed_at: number;
  parts: UnitParts;
}

export interface StoredState {
  settledBefore: number;
  units: Map<string, StoredUnit>;
}

export interface StateScope {
  workspaceId: string;
  experimentId: string;
  stateKey: string;
}

/** Rows per INSERT: 13 values each, under every driver's limit on parameters. */
const BATCH = 500;

async function settledBefore(executor: Executor, scope: StateScope): Promise<number | null> {
  const row = await executor
    .selectFrom('warehouse_refresh_states')
    .select('settled_before')
    .where('workspace_id', '=', scope.workspaceId)
    .where('experiment_id', '=', scope.experimentId)
    .where('state_key', '=', scope.stateKey)
    .executeTakeFirst();
  return row ? Number(row.settled_before) : null;
}

export async function loadState(db: Db, scope: StateScope): Promise<StoredState | null> {
  const settled = await settledBefore(db, scope);
  if (settled === null) return null;
  const rows = await db
    .selectFrom('warehouse_unit_states')
    .selectAll()
    .where('experiment_id', '=', scope.experimentId)
    .where('state_key', '=', scope.stateKey)
    .execute();
  const units = new Map<string, StoredUnit>();
  for (const row of rows) {
    const parts = emptyParts();
    for (const period of PERIODS) {
      parts[period].c = Number(row[`${period}_c`]);
      parts[period].cv = Number(row[`${period}_cv`]);
      parts[period].s = Number(row[`${period}_s`]);
    }
    units.set(row.unit_id, { exposed_at: Number(row.exposed_at), parts });
  }
  return { settledBefore: settled, units };
}

export interface StateChange {
  /** The settled time the refresh started from (null: none, or a full refresh that replaces it). */
  readFrom: number | null;
  settledBefore: number;
  /** Replace every unit (a full refresh, or the first). */
  replace: boolean;
  /** Units whose state is new or changed. */
  upserts: Map<string, StoredUnit>;
  /** Units no longer exposed. */
  removed: string[];
  refreshedAt: number;
}

function unitRow(scope: StateScope, unitId: string, unit: StoredUnit) {
  const { m, d, p } = unit.parts;
  return {
    experiment_id: scope.experimentId,
    state_key: scope.stateKey,
    unit_id: unitId,
    exposed_at: unit.exposed_at,
    ...{ m_c: m.c, m_cv: m.cv, m_s: m.s, d_c: d.c, d_cv: d.cv, d_s: d.s, p_c: p.c, p_cv: p.cv, p_s: p.s },
  };
}

async function writeUnits(executor: Executor, scope: StateScope, change: StateChange): Promise<void> {
  const units = executor.deleteFrom('warehouse_unit_states').where('experiment_id', '=', scope.experimentId).where('state_key', '=', scope.stateKey);
  if (change.replace) await units.execute();
  for (let at = 0; at < change.removed.length; at += BATCH) await units.where('unit_id', 'in', change.removed.slice(at, at + BATCH)).execute();
  const rows = [...change.upserts].map(([unitId, unit]) => unitRow(scope, unitId, unit));
  for (let at = 0; at < rows.length; at += BATCH) {
    await executor
      .insertInto('warehouse_unit_states')
      .values(rows.slice(at, at + BATCH))
      .onConflict((conflict) =>
        conflict.columns(['experiment_id', 'state_key', 'unit_id']).doUpdateSet((eb) => ({
          exposed_at: eb.ref('excluded.exposed_at'),
          ...Object.fromEntries(
            PERIODS.flatMap((period) => ['c', 'cv', 's'].map((part) => [`${period}_${part}`, eb.ref(`excluded.${period}_${part}` as 'excluded.m_c')])),
          ),
        })),
      )
      .execute();
  }
}

/** Writes the refresh's state; false when another refresh of the same state committed first (its state stands). */
export async function saveState(db: Db, scope: StateScope, change: StateChange): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const current = await settledBefore(trx, scope);
    if (!change.replace && current !== change.readFrom) return false;
    await writeUnits(trx, scope, change);
    await trx
      .insertInto('warehouse_refresh_states')
      .values({
        experiment_id: scope.experimentId,
        state_key: scope.stateKey,
        workspace_id: scope.workspaceId,
        settled_before: change.settledBefore,
        refreshed_at: change.refreshedAt,
      })
      .onConflict((conflict) =>
        conflict.columns(['experiment_id', 'state_key']).doUpdateSet({ settled_before: change.settledBefore, refreshed_at: change.refreshedAt }),
      )
      .execute();
    return true;
  });
}

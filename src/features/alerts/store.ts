import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { AlertStatesTable } from '../../db/tables/outbound.js';

export type AlertStateRow = Selectable<AlertStatesTable>;

export async function listAlertStates(executor: Executor, experimentId: string): Promise<Map<string, AlertStateRow>> {
  const rows = await executor.selectFrom('alert_states').selectAll().where('experiment_id', '=', experimentId).execute();
  return new Map(rows.map((row) => [row.condition, row]));
}

/** Inserts or replaces the state of one condition (rows are few: one per experiment and condition). */
export async function saveAlertState(executor: Executor, row: AlertStateRow, exists: boolean): Promise<void> {
  if (exists) {
    await executor
      .updateTable('alert_states')
      .set({ active: row.active, value: row.value, snapshot_id: row.snapshot_id, changed_at: row.changed_at })
      .where('experiment_id', '=', row.experiment_id)
      .where('condition', '=', row.condition)
      .execute();
  } else {
    await executor.insertInto('alert_states').values(row).execute();
  }
}

import type { Kysely } from 'kysely';

// Incremental refreshes of metrics on fact tables (docs/warehouse.md "Incremental refresh"):
// - fact_tables.restatement_hours: how far behind the last refresh's cutoff each refresh re-reads
//   (late rows inside it count; 48 by default);
// - warehouse_refresh_states: per experiment and what a unit's rows are read for (state_key, a hash
//   of the fact table's SQL, filter, column, periods and stop), the time below which every unit's
//   rows are settled in warehouse_unit_states;
// - warehouse_unit_states: per unit, its exposure time (a change reads the unit again in full) and
//   its settled row count, count of numbers and sum for the metric's window (m), a ratio's
//   denominator (d) and the CUPED lookback (p).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('fact_tables')
    .addColumn('restatement_hours', 'integer', (c) => c.notNull().defaultTo(48))
    .execute();
  await db.schema
    .createTable('warehouse_refresh_states')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('state_key', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('settled_before', 'bigint', (c) => c.notNull())
    .addColumn('refreshed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('warehouse_refresh_states_pk', ['experiment_id', 'state_key'])
    .execute();
  let units = db.schema
    .createTable('warehouse_unit_states')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('state_key', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('exposed_at', 'bigint', (c) => c.notNull());
  for (const period of ['m', 'd', 'p'])
    for (const part of ['c', 'cv', 's']) units = units.addColumn(`${period}_${part}`, 'double precision', (c) => c.notNull().defaultTo(0));
  await units.addPrimaryKeyConstraint('warehouse_unit_states_pk', ['experiment_id', 'state_key', 'unit_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('warehouse_unit_states').execute();
  await db.schema.dropTable('warehouse_refresh_states').execute();
  await db.schema.alterTable('fact_tables').dropColumn('restatement_hours').execute();
}

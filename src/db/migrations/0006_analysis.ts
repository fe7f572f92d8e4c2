import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analysis_snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id'))
    .addColumn('computed_at', 'bigint', (c) => c.notNull())
    .addColumn('decision_rule_satisfied', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .execute();
  // Latest snapshot (ORDER BY id DESC LIMIT 1) and history (keyset on id) of one experiment.
  await db.schema.createIndex('analysis_snapshots_experiment_idx').on('analysis_snapshots').columns(['experiment_id', 'id']).execute();

  // late_event_count scans the late events of the experiment's metric keys and probes the live
  // exposures for each. Late events are rare (received 7 to 30 days after they occurred), so a
  // partial index stays tiny and costs the hot insert path almost nothing.
  await db.schema.createIndex('events_late_idx').on('events').columns(['workspace_id', 'event_key', 'unit_id']).where(sql.ref('late'), '=', 1).execute();

  // The scheduler looks for running (and recently stopped) experiments across all workspaces.
  await db.schema.createIndex('experiments_analysis_status_idx').on('experiments').columns(['status', 'stopped_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('experiments_analysis_status_idx').execute();
  await db.schema.dropIndex('events_late_idx').execute();
  await db.schema.dropTable('analysis_snapshots').execute();
}

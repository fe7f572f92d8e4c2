import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createExperiments(db);
  await createAssignments(db);
  await createExposures(db);
}

async function createExperiments(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('experiments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hypothesis', 'text', (c) => c.notNull())
    .addColumn('unit_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('variants', 'text', (c) => c.notNull())
    .addColumn('audience', 'text')
    .addColumn('decision_rule', 'text', (c) => c.notNull())
    .addColumn('primary_metric_id', 'text')
    .addColumn('guardrail_metric_ids', 'text', (c) => c.notNull())
    .addColumn('mutex_group_id', 'text', (c) => c.references('mutex_groups.id'))
    .addColumn('weights_changed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'bigint')
    .addColumn('stopped_at', 'bigint')
    .addColumn('stop_reason', 'text')
    .addColumn('outcome_notes', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('experiments_workspace_key_unique', ['workspace_id', 'key'])
    .execute();
  await db.schema.createIndex('experiments_status_idx').on('experiments').columns(['workspace_id', 'status', 'id']).execute();
  await db.schema.createIndex('experiments_mutex_idx').on('experiments').columns(['mutex_group_id']).execute();

  await db.schema
    .createTable('experiment_overrides')
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id'))
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('variant_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('experiment_overrides_pk', ['experiment_id', 'unit_id'])
    .execute();
}

async function createAssignments(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('assignments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id'))
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('variant_key', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('exposure_logged_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('assignments_experiment_unit_unique', ['experiment_id', 'unit_id'])
    .execute();
  await db.schema.createIndex('assignments_unit_idx').on('assignments').columns(['workspace_id', 'unit_id']).execute();

  // The first experiment of a mutex group to assign a unit owns it; the primary key makes the
  // claim atomic across processes.
  await db.schema
    .createTable('mutex_claims')
    .addColumn('mutex_group_id', 'text', (c) => c.notNull().references('mutex_groups.id'))
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('mutex_claims_pk', ['mutex_group_id', 'unit_id'])
    .execute();
}

async function createExposures(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('exposures')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id'))
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('variant_key', 'text', (c) => c.notNull())
    .addColumn('exposed_at', 'bigint', (c) => c.notNull())
    .addColumn('superseded_at', 'bigint')
    .addColumn('source', 'text', (c) => c.notNull())
    .execute();
  // One live (not superseded) exposure per unit and experiment; re-bucketed history stays.
  await db.schema
    .createIndex('exposures_live_unique')
    .on('exposures')
    .columns(['experiment_id', 'unit_id'])
    .unique()
    .where(sql.ref('superseded_at'), 'is', null)
    .execute();
  await db.schema.createIndex('exposures_analysis_idx').on('exposures').columns(['experiment_id', 'superseded_at', 'variant_key']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['exposures', 'mutex_claims', 'assignments', 'experiment_overrides', 'experiments']) {
    await db.schema.dropTable(table).execute();
  }
}

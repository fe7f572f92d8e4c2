import type { Kysely } from 'kysely';

// Assignment sources and analysis-only experiments (docs/warehouse.md "Experiments assigned elsewhere"):
// - assignment_sources: SQL over a data source returning who was exposed to which variant of which
//   experiment and when, with the four columns the user named and the columns Verdict described;
// - experiments.assignment_source_id: set for an experiment assigned elsewhere (Verdict does not
//   assign it; its exposures are read from the source), null otherwise;
// - experiments.assignment_experiment_key: the experiment's key in the source when it differs from
//   Verdict's key, else null.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('assignment_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('data_source_id', 'text', (c) => c.notNull().references('data_sources.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sql', 'text', (c) => c.notNull())
    .addColumn('unit_id_column', 'text', (c) => c.notNull())
    .addColumn('experiment_key_column', 'text', (c) => c.notNull())
    .addColumn('variant_key_column', 'text', (c) => c.notNull())
    .addColumn('timestamp_column', 'text', (c) => c.notNull())
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('assignment_sources_workspace_idx').on('assignment_sources').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('assignment_sources_source_idx').on('assignment_sources').columns(['data_source_id']).execute();
  await db.schema.alterTable('experiments').addColumn('assignment_source_id', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('assignment_experiment_key', 'text').execute();
  await db.schema.createIndex('experiments_assignment_source_idx').on('experiments').columns(['assignment_source_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('experiments_assignment_source_idx').execute();
  await db.schema.alterTable('experiments').dropColumn('assignment_experiment_key').execute();
  await db.schema.alterTable('experiments').dropColumn('assignment_source_id').execute();
  await db.schema.dropTable('assignment_sources').execute();
}

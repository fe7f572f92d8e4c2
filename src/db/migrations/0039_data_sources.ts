import type { Kysely } from 'kysely';

// Warehouse sources (docs/warehouse.md): a team's own PostgreSQL or ClickHouse, read-only, its URL
// sealed with the secret key like webhook endpoint URLs (0028); and fact tables, SQL over a source
// with the columns Verdict described when it was saved.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('data_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url_enc', 'text', (c) => c.notNull())
    .addColumn('url_masked', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('data_sources_workspace_idx').on('data_sources').columns(['workspace_id', 'id']).execute();
  await db.schema
    .createTable('fact_tables')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('data_source_id', 'text', (c) => c.notNull().references('data_sources.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('sql', 'text', (c) => c.notNull())
    .addColumn('unit_id_column', 'text', (c) => c.notNull())
    .addColumn('timestamp_column', 'text', (c) => c.notNull())
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('fact_tables_workspace_idx').on('fact_tables').columns(['workspace_id', 'id']).execute();
  await db.schema.createIndex('fact_tables_source_idx').on('fact_tables').columns(['data_source_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('fact_tables').execute();
  await db.schema.dropTable('data_sources').execute();
}

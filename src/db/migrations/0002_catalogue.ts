import type { Kysely } from 'kysely';

// Metrics, segments and mutex groups: the reusable definitions experiments refer to.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('metrics')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('aggregation', 'text', (c) => c.notNull())
    .addColumn('unit_dedup_window', 'text', (c) => c.notNull())
    .addColumn('unit_dedup_window_ms', 'bigint', (c) => c.notNull())
    .addColumn('property_path', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('metrics_workspace_key_unique', ['workspace_id', 'key'])
    .execute();
  await db.schema.createIndex('metrics_event_key_idx').on('metrics').columns(['workspace_id', 'event_key']).execute();

  await db.schema
    .createTable('segments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('rule', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('segments_workspace_key_unique', ['workspace_id', 'key'])
    .execute();

  await db.schema
    .createTable('mutex_groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('mutex_groups_workspace_key_unique', ['workspace_id', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['mutex_groups', 'segments', 'metrics']) await db.schema.dropTable(table).execute();
}

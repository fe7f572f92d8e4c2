import type { Kysely } from 'kysely';

// Templates are soft-deleted (deleted_at) so that their frozen versions, which renders point
// at, stay readable and renderable. Versions are keyed by (template_id, seq): the primary key
// is what makes two concurrent freezes unable to produce the same label.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTemplateTables(db);
  await createRenderTables(db);
}

async function createTemplateTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('version_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('templates_workspace_idx').on('templates').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('template_versions')
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('body_snapshot', 'text', (c) => c.notNull())
    .addColumn('fields_schema', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'seq'])
    .execute();
}

async function createRenderTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('renders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id'))
    .addColumn('version_seq', 'integer', (c) => c.notNull())
    .addColumn('version_label', 'text', (c) => c.notNull())
    .addColumn('formats', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .execute();
  await db.schema.createIndex('renders_workspace_idx').on('renders').columns(['workspace_id', 'id']).execute();

  // `bytea` is PostgreSQL's binary type; SQLite accepts the name and, whatever a column's
  // affinity, stores a BLOB value as given.
  await db.schema
    .createTable('render_outputs')
    .addColumn('render_id', 'text', (c) => c.notNull().references('renders.id'))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content', 'bytea', (c) => c.notNull())
    .addColumn('byte_size', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('render_outputs_pk', ['render_id', 'format'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['render_outputs', 'renders', 'template_versions', 'templates']) {
    await db.schema.dropTable(table).execute();
  }
}

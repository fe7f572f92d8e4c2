import type { Kysely } from 'kysely';

// Read-only links to one experiment's results (docs/ui.md "Sharing a result"). Only the SHA-256
// of the link's token is stored; a link ends at expires_at or when revoked.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('share_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('experiment_id', 'text', (c) => c.notNull().references('experiments.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('share_links_experiment_idx').on('share_links').columns(['workspace_id', 'experiment_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('share_links').execute();
}

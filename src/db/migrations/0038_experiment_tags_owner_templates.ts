import type { Kysely } from 'kysely';

// The experiment list at scale (issue #52):
// - experiments.tags: a JSON array of tags; null reads as none;
// - experiments.owner_user_id: the person (users.id) who owns it, or null;
// - experiments.owner_name: the owner's name as free text, or the person's name when
//   owner_user_id is set (kept so a list needs no join); null when nobody owns it;
// - experiment_templates: a saved definition (metrics, rule, allocation, variants, tags) that a
//   new experiment starts from.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('tags', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('owner_user_id', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('owner_name', 'text').execute();
  await db.schema
    .createTable('experiment_templates')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('experiment_templates_workspace_idx').on('experiment_templates').columns(['workspace_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('experiment_templates').execute();
  await db.schema.alterTable('experiments').dropColumn('owner_name').execute();
  await db.schema.alterTable('experiments').dropColumn('owner_user_id').execute();
  await db.schema.alterTable('experiments').dropColumn('tags').execute();
}

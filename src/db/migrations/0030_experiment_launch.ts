import type { Kysely } from 'kysely';

// Launches (issue #57): a stopped experiment can keep serving one variant to every unit until it
// is archived.
// - experiments.launched_variant_key: the variant served with reason "launched", or null;
// - experiments.launched_at: when it was launched (a relaunch moves it);
// - experiments.launch_reason: why, as the person or key gave it (or null).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('launched_variant_key', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('launched_at', 'bigint').execute();
  await db.schema.alterTable('experiments').addColumn('launch_reason', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('launch_reason').execute();
  await db.schema.alterTable('experiments').dropColumn('launched_at').execute();
  await db.schema.alterTable('experiments').dropColumn('launched_variant_key').execute();
}

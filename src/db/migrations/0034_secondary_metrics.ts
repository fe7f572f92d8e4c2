import type { Kysely } from 'kysely';

// Goals beside the primary metric and the correction for reading several at once (issue #58):
// - experiments.secondary_metric_ids: metric ids as a JSON array; null reads as none;
// - experiments.multiple_testing: {method, scope} as JSON; null reads as the default
//   (Benjamini-Hochberg over the goals).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('secondary_metric_ids', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('multiple_testing', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('multiple_testing').execute();
  await db.schema.alterTable('experiments').dropColumn('secondary_metric_ids').execute();
}

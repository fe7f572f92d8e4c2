import type { Kysely } from 'kysely';

// A metric's optional display unit (docs/metrics.md "Unit"): "ms", "USD", "items"... null when none.
// Only for showing values; the analysis never reads it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').addColumn('unit', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').dropColumn('unit').execute();
}

import type { Kysely } from 'kysely';

// CUPED (docs/statistics.md "2b. CUPED variance reduction"): an experiment's variance reduction as JSON text
// {method: "cuped", lookback_days}, or null for none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('variance_reduction', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('variance_reduction').execute();
}

import type { Kysely } from 'kysely';

// Quantile metrics (docs/metrics.md "Quantile metrics"): the quantile q (0 < q < 1) and whether it
// is taken over every event's number or over one value per unit; both null for other kinds.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').addColumn('quantile', 'double precision').execute();
  await db.schema.alterTable('metrics').addColumn('quantile_level', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').dropColumn('quantile_level').execute();
  await db.schema.alterTable('metrics').dropColumn('quantile').execute();
}

import type { Kysely } from 'kysely';

// Metrics on fact tables (docs/warehouse.md): a metric reads a fact table's rows instead of events.
// - metrics.fact_table_id: the fact table, or null for a metric on events (event_key is then '');
// - metrics.fact_column: the column summed or averaged (sum and mean), null otherwise;
// - metrics.fact_filter: a boolean SQL expression over the fact table's columns, or null for all rows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').addColumn('fact_table_id', 'text').execute();
  await db.schema.alterTable('metrics').addColumn('fact_column', 'text').execute();
  await db.schema.alterTable('metrics').addColumn('fact_filter', 'text').execute();
  await db.schema.createIndex('metrics_fact_table_idx').on('metrics').columns(['fact_table_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('metrics_fact_table_idx').execute();
  await db.schema.alterTable('metrics').dropColumn('fact_filter').execute();
  await db.schema.alterTable('metrics').dropColumn('fact_column').execute();
  await db.schema.alterTable('metrics').dropColumn('fact_table_id').execute();
}

import type { Kysely } from 'kysely';

// Alerts limited to chosen experiments, and delivery logs that say which experiment an event is
// about (issue #52):
// - webhook_endpoints.experiment_ids: a JSON array of experiment ids the endpoint is sent events
//   of, or null for every experiment (every endpoint before this migration);
// - webhook_endpoint_deliveries.experiment_id: the experiment the delivered event is about, null
//   for a test ping and for deliveries made before this migration.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('experiment_ids', 'text').execute();
  await db.schema.alterTable('webhook_endpoint_deliveries').addColumn('experiment_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoint_deliveries').dropColumn('experiment_id').execute();
  await db.schema.alterTable('webhook_endpoints').dropColumn('experiment_ids').execute();
}

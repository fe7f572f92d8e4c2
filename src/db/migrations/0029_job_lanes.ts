import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Job lanes (docs/architecture.md, "Jobs run in two lanes"): outbound deliveries wait on other
// people's servers, so they run in a pool of their own, shared fairly between workspaces, and never
// hold the slots of renders, task-tool mirroring or the analysis. Each job says its lane; the claim
// index leads with it. Delivery jobs enqueued before this migration move to the outbound lane and
// get the workspace of their delivery, which the fair claim groups them by.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('lane', 'text', (c) => c.notNull().defaultTo('general'))
    .execute();
  await db.schema.createIndex('jobs_lane_claim_idx').on('jobs').columns(['lane', 'status', 'run_at']).execute();
  // The outbound claim steps through the workspaces with queued jobs, and takes each one's oldest.
  await db.schema.createIndex('jobs_lane_workspace_claim_idx').on('jobs').columns(['lane', 'status', 'workspace_id', 'run_at']).execute();
  const deliveryId =
    db.getExecutor().adapter instanceof PostgresAdapter ? sql`(jobs.payload::jsonb ->> 'delivery_id')` : sql`json_extract(jobs.payload, '$.delivery_id')`;
  // A job whose delivery is gone (its endpoint was deleted) has nothing to send; it stays general.
  await sql`UPDATE jobs SET lane = 'outbound',
      workspace_id = (SELECT d.workspace_id FROM webhook_endpoint_deliveries d WHERE d.id = ${deliveryId})
    WHERE name = 'webhooks.deliver' AND EXISTS (SELECT 1 FROM webhook_endpoint_deliveries d WHERE d.id = ${deliveryId})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_lane_workspace_claim_idx').execute();
  await db.schema.dropIndex('jobs_lane_claim_idx').execute();
  await db.schema.alterTable('jobs').dropColumn('lane').execute();
}

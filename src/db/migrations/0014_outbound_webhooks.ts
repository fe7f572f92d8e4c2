import type { Kysely } from 'kysely';

// Outbound webhooks and alerts (docs/webhooks.md "Outbound deliveries", issue #35):
// - webhook_endpoints: customer URLs with a sealed signing secret (and the previous one during a
//   rotation), the event types they want and their format (verdict or slack);
// - webhook_endpoint_deliveries: one row per (endpoint, event) with the body exactly as sent, so
//   every retry and redelivery carries the same bytes and event id;
// - alert_states: per experiment and condition, whether it is active, so a condition fires once
//   when it becomes true and again only after it cleared;
// - experiments.auto_stop: the automatic-stop switches as JSON text (null: all off).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('previous_secret_enc', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_workspace_idx').on('webhook_endpoints').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('webhook_endpoint_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('retry_until', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .addUniqueConstraint('webhook_endpoint_deliveries_event_unique', ['endpoint_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_endpoint_deliveries_endpoint_idx').on('webhook_endpoint_deliveries').columns(['endpoint_id', 'id']).execute();

  await db.schema
    .createTable('alert_states')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('snapshot_id', 'text')
    .addColumn('changed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_states_pk', ['experiment_id', 'condition'])
    .execute();

  await db.schema.alterTable('experiments').addColumn('auto_stop', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('auto_stop').execute();
  await db.schema.dropTable('alert_states').execute();
  await db.schema.dropTable('webhook_endpoint_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}

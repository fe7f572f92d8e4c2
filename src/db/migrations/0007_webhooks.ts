import type { Kysely } from 'kysely';

// Signed webhooks: sources with sealed secrets, the record of deliveries, remembered
// idempotency keys, and the task-tool side (leads, settings, applied history items).
// Uniqueness that the API promises (source slug, task id per workspace, one idempotency row
// per key, one applied history item) is enforced by constraints, not by read-then-write.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createSourceTables(db);
  await createIdempotencyTable(db);
  await createTaskToolTables(db);
}

async function createSourceTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('previous_secret_enc', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('webhook_sources_workspace_slug_unique', ['workspace_id', 'slug'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull().references('webhook_sources.id'))
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('accepted_count', 'integer', (c) => c.notNull())
    .addColumn('rejected_count', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_source_idx').on('webhook_deliveries').columns(['source_id', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_received_idx').on('webhook_deliveries').columns(['received_at']).execute();
}

async function createIdempotencyTable(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_idempotency_keys')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull().references('webhook_sources.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('lock_token', 'text', (c) => c.notNull())
    .addColumn('locked_at', 'bigint', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_idempotency_keys_pk', ['workspace_id', 'source_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('webhook_idempotency_expiry_idx').on('webhook_idempotency_keys').columns(['expires_at']).execute();
}

async function createTaskToolTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('leads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('task_tool_task_id', 'text')
    .addColumn('task_tool_status_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('leads_workspace_task_unique', ['workspace_id', 'task_tool_task_id'])
    .execute();
  await db.schema.createIndex('leads_workspace_idx').on('leads').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('task_tool_settings')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('status_mapping', 'text', (c) => c.notNull())
    .addColumn('previous_secret_enc', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('task_tool_history_items')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('processed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('task_tool_history_items_pk', ['workspace_id', 'item_id'])
    .execute();
  await db.schema.createIndex('task_tool_history_processed_idx').on('task_tool_history_items').columns(['processed_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['task_tool_history_items', 'task_tool_settings', 'leads', 'webhook_idempotency_keys', 'webhook_deliveries', 'webhook_sources']) {
    await db.schema.dropTable(table).execute();
  }
}

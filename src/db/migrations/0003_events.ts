import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createEventsTable(db);
  await createBufferTables(db);
}

async function createEventsTable(db: Kysely<unknown>): Promise<void> {
  // No foreign key to workspaces: this is the hottest insert path, the drainer writes only
  // workspace ids that an API key vouched for, and a per-row lookup would cost throughput.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('properties', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('late', 'integer', (c) => c.notNull())
    .addColumn('client_event_id', 'text')
    .execute();
  // The last line of de-duplication: whatever the buffer does, a client_event_id is stored once
  // per workspace (NULLs are distinct, so events without one are unaffected).
  await db.schema.createIndex('events_client_event_id_unique').on('events').columns(['workspace_id', 'client_event_id']).unique().execute();
  // Per-experiment aggregation: a metric's events (event_key) of the exposed units, in time.
  // Receipt-time scans (incremental analysis, late events) use the primary key instead: the id
  // is a ULID assigned on receipt, so an index on received_at would duplicate it.
  await db.schema.createIndex('events_metric_idx').on('events').columns(['workspace_id', 'event_key', 'unit_id', 'occurred_at']).execute();
}

async function createBufferTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_buffer')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('event_dedupe')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('client_event_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('event_dedupe_pk', ['workspace_id', 'client_event_id'])
    .execute();
  await db.schema.createIndex('event_dedupe_expiry_idx').on('event_dedupe').columns(['expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['event_dedupe', 'event_buffer', 'events']) await db.schema.dropTable(table).execute();
}

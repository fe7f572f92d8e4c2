import type { Kysely } from 'kysely';

// The audit log's actor filter (GET /v1/audit?actor_id=..., ?actor_type=system; issue #33): one
// key's entries are few among a workspace's, so without an index a page of them scans the whole log.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('audit_actor_idx').on('audit_entries').columns(['workspace_id', 'actor_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_actor_idx').execute();
}

import type { Kysely } from 'kysely';

// Admin UI sessions. Only the SHA-256 of the cookie's token is stored, so a copy of the
// database cannot be replayed as a browser session. The CSRF token is stored as is: on its own
// it grants nothing (it is only checked next to a valid session cookie), and the UI reads it
// back after a page reload.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
}

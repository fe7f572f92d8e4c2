import type { Kysely } from 'kysely';

// People (docs/ui.md "People and roles"): users of one workspace with a role, the one-time links
// that invite them or reset their password, their admin UI sessions, and the failed sign-ins that
// slow down guessing. Tokens (links and cookies) are stored as SHA-256 only, passwords as scrypt.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('oidc_subject', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .execute();
  // One account per address in a workspace; addresses are stored lower-cased.
  await db.schema.createIndex('users_workspace_email_idx').on('users').columns(['workspace_id', 'email']).unique().execute();

  await db.schema
    .createTable('user_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();

  await db.schema
    .createTable('user_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('user_sessions_user_idx').on('user_sessions').column('user_id').execute();

  // Failed sign-ins per throttle key (an account at one address, or one address over all
  // accounts), counted in a fixed window.
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('throttle_key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
  await db.schema.dropTable('user_sessions').execute();
  await db.schema.dropTable('user_links').execute();
  await db.schema.dropTable('users').execute();
}

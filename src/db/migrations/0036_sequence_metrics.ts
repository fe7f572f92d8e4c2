import type { Kysely } from 'kysely';

// Funnel and retention metrics (docs/metrics.md "Funnel metrics", "Retention metrics"):
// - metrics.steps: a funnel's ordered steps as JSON ([{event_key, where?}]); null otherwise;
// - metrics.retention: a retention metric's {from, to} (ISO 8601 durations) as JSON; null otherwise.
// A funnel's window is stored in unit_dedup_window (the events after the exposure it reads), a
// retention metric's `to` too; both kinds keep '' in event_key when they name no single event.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').addColumn('steps', 'text').execute();
  await db.schema.alterTable('metrics').addColumn('retention', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('metrics').dropColumn('retention').execute();
  await db.schema.alterTable('metrics').dropColumn('steps').execute();
}

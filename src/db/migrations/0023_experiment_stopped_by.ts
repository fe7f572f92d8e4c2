import type { Kysely } from 'kysely';

// Who stopped an experiment (issue #35), so the experiment itself says so and the admin UI can
// write "stopped automatically by snapshot ...":
// - experiments.stopped_by: 'key', 'person' (an admin UI session) or 'auto' (an auto-stop
//   condition); null while not stopped, and for experiments stopped before this migration;
// - experiments.stop_snapshot_id: the snapshot that stopped it when stopped_by is 'auto'.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('stopped_by', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('stop_snapshot_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('stop_snapshot_id').execute();
  await db.schema.alterTable('experiments').dropColumn('stopped_by').execute();
}

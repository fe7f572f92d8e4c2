import type { Kysely } from 'kysely';

// Bandits (docs/experiments.md "Bandits", decisions §17, issue #36):
// - experiments.allocation: {type: "fixed"} or {type: "bandit", burn_in_hours, ...} as JSON text;
//   null (every existing experiment) reads as fixed;
// - experiments.allocation_periods: [{started_at, weights, seed}] as JSON text, one entry per
//   weight split a bandit has used; null reads as none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').addColumn('allocation', 'text').execute();
  await db.schema.alterTable('experiments').addColumn('allocation_periods', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('experiments').dropColumn('allocation_periods').execute();
  await db.schema.alterTable('experiments').dropColumn('allocation').execute();
}

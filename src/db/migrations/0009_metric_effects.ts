import type { Kysely } from 'kysely';

// Metrics, second stage (docs/metrics.md "Direction", "Capping", "Ratio metrics"): a description, the metric's direction,
// capping (winsorization) as JSON text {type, value}, and the two component metrics of a ratio.
// A ratio metric keeps event_key = '' (the column is NOT NULL since 0002; the API shows null).
export async function up(db: Kysely<unknown>): Promise<void> {
  // SQLite's ALTER TABLE adds one column per statement.
  await db.schema.alterTable('metrics').addColumn('description', 'text').execute();
  await db.schema
    .alterTable('metrics')
    .addColumn('higher_is_better', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('metrics').addColumn('capping', 'text').execute();
  await db.schema.alterTable('metrics').addColumn('numerator_metric_id', 'text').execute();
  await db.schema.alterTable('metrics').addColumn('denominator_metric_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['denominator_metric_id', 'numerator_metric_id', 'capping', 'higher_is_better', 'description']) {
    await db.schema.alterTable('metrics').dropColumn(column).execute();
  }
}

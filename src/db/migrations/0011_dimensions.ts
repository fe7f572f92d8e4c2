import type { Kysely } from 'kysely';

// Dimension breakdowns (docs/analysis.md "Breakdowns by dimension", issue #18):
// - experiments.dimensions: the attribute names to break results down by, as a JSON array;
// - assignments.dimension_values: those attributes' values from the first assignment's context,
//   as a JSON object of strings (null when the experiment named no dimension then);
// - exposures.source_key_id: the id of the API key that logged the exposure.
// Existing rows get no value (null, or an empty list).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('experiments')
    .addColumn('dimensions', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('assignments').addColumn('dimension_values', 'text').execute();
  await db.schema.alterTable('exposures').addColumn('source_key_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('exposures').dropColumn('source_key_id').execute();
  await db.schema.alterTable('assignments').dropColumn('dimension_values').execute();
  await db.schema.alterTable('experiments').dropColumn('dimensions').execute();
}

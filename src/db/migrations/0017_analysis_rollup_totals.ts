import { sql, type Kysely } from 'kysely';

// Incremental analysis, maintained totals (docs/analysis.md "Incremental analysis", issue #32):
// - analysis_rollup_totals: per experiment, slice (the whole experiment, or one value of one
//   breakdown) and variant, the units and each metric's sufficient statistics, kept up to date by
//   each refreshed unit's old-to-new difference. Sums are exact (lib/exact-sum.ts), kept as text.
// - analysis_rollup_touched: the units a refresh in progress changes (a scratch list, written and
//   emptied inside the refresh's transaction).
// - analysis_rollup_state.totals_plan: the hash of what the totals are sums of (the metrics'
//   specs, caps and breakdowns); another plan rebuilds them from the rollups.
// - analysis_rollup_state.progress: a SQLite build in steps (its watermark and the last unit built).
// - analysis_rollup_units.dimension_values: the unit's assignment's values as of its refresh, so
//   that a unit's old contribution is taken from the slice it was added to.
// Rollups are derived data: those of before are dropped and built again with the new columns.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['analysis_rollup_values', 'analysis_rollup_units', 'analysis_rollup_state']) await sql`DELETE FROM ${sql.table(table)}`.execute(db);
  await sql`ALTER TABLE analysis_rollup_units ADD COLUMN dimension_values text`.execute(db);
  await db.schema
    .createTable('analysis_rollup_totals')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('slice', 'text', (c) => c.notNull())
    .addColumn('variant_key', 'text', (c) => c.notNull())
    .addColumn('units', 'bigint', (c) => c.notNull())
    .addColumn('sums', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analysis_rollup_totals_pk', ['experiment_id', 'slice', 'variant_key'])
    .execute();
  await db.schema
    .createTable('analysis_rollup_touched')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analysis_rollup_touched_pk', ['experiment_id', 'unit_id'])
    .execute();
  await sql`ALTER TABLE analysis_rollup_state ADD COLUMN totals_plan text`.execute(db);
  await sql`ALTER TABLE analysis_rollup_state ADD COLUMN progress text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE analysis_rollup_state DROP COLUMN progress`.execute(db);
  await sql`ALTER TABLE analysis_rollup_state DROP COLUMN totals_plan`.execute(db);
  await db.schema.dropTable('analysis_rollup_touched').execute();
  await db.schema.dropTable('analysis_rollup_totals').execute();
  await sql`ALTER TABLE analysis_rollup_units DROP COLUMN dimension_values`.execute(db);
}

import type { Kysely } from 'kysely';

// A holdout's own analysis (issue #57): held-out units against an equal-size sample of the
// covered population.
// - holdouts.metric_ids: the metrics its snapshots analyse (JSON array; null reads as none);
//   holdouts.variance_reduction: {method: 'cuped', lookback_days} as JSON, or null;
// - holdout_contacts: each held-out or sampled unit's first contact, the earliest time an assign
//   call in a covered experiment saw it, with its two buckets (the holdout's and the sample's), so
//   a snapshot can tell the groups apart under the holdout's percentage of the day;
// - holdout_snapshots: the stored analyses, one JSON document each.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('holdouts').addColumn('metric_ids', 'text').execute();
  await db.schema.alterTable('holdouts').addColumn('variance_reduction', 'text').execute();

  await db.schema
    .createTable('holdout_contacts')
    .addColumn('holdout_id', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('bucket', 'integer', (c) => c.notNull())
    .addColumn('sample_bucket', 'integer', (c) => c.notNull())
    .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('holdout_contacts_pk', ['holdout_id', 'unit_id'])
    .execute();

  await db.schema
    .createTable('holdout_snapshots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('holdout_id', 'text', (c) => c.notNull().references('holdouts.id'))
    .addColumn('computed_at', 'bigint', (c) => c.notNull())
    .addColumn('document', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('holdout_snapshots_holdout_idx').on('holdout_snapshots').columns(['holdout_id', 'computed_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('holdout_snapshots').execute();
  await db.schema.dropTable('holdout_contacts').execute();
  await db.schema.alterTable('holdouts').dropColumn('variance_reduction').execute();
  await db.schema.alterTable('holdouts').dropColumn('metric_ids').execute();
}

import { PostgresAdapter, sql, type Kysely } from 'kysely';

// Incremental analysis (docs/analysis.md "Incremental analysis", issue #32):
// - analysis_rollup_units: per experiment, the live exposures as of the experiment's last refresh
//   (the units a snapshot from rollups counts, in the variant, with the source, of that moment);
// - analysis_rollup_values: per experiment, metric and unit, what rebuilds the unit's value: the
//   counted events, the sum and count of the numbers at property_path, and the same over the
//   CUPED lookback. A unit without a row has no event of that metric in its window or lookback;
// - analysis_rollup_state: per experiment, the watermark of the last refresh and the definition
//   hash of each metric's rows.
// The watermark needs to know in which order rows became visible:
// - PostgreSQL: events and exposures record the writing transaction (drain_xid, change_xid, an
//   xid8 defaulting to pg_current_xact_id(); a trigger stamps an exposure again when it is
//   superseded). Rows written before this migration keep NULL: visible to every later refresh.
// - SQLite (one writer at a time): an event's and an exposure's rowid, and exposures.superseded_seq,
//   a counter a trigger sets when an exposure is superseded.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('analysis_rollup_units')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    // The exposure's id (PostgreSQL groups the analysis's per-unit rows by it).
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('variant_key', 'text', (c) => c.notNull())
    .addColumn('exposed_at', 'bigint', (c) => c.notNull())
    .addColumn('source_key_id', 'text')
    .addPrimaryKeyConstraint('analysis_rollup_units_pk', ['experiment_id', 'unit_id'])
    .execute();
  await db.schema
    .createTable('analysis_rollup_values')
    .addColumn('experiment_id', 'text', (c) => c.notNull())
    .addColumn('unit_id', 'text', (c) => c.notNull())
    .addColumn('metric_id', 'text', (c) => c.notNull())
    .addColumn('cnt', 'bigint', (c) => c.notNull())
    .addColumn('vsum', 'double precision', (c) => c.notNull())
    .addColumn('vcnt', 'bigint', (c) => c.notNull())
    .addColumn('pre_cnt', 'bigint', (c) => c.notNull())
    .addColumn('pre_vsum', 'double precision', (c) => c.notNull())
    .addColumn('pre_vcnt', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analysis_rollup_values_pk', ['experiment_id', 'unit_id', 'metric_id'])
    .execute();
  await db.schema
    .createTable('analysis_rollup_state')
    .addColumn('experiment_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('watermark', 'text', (c) => c.notNull())
    .addColumn('definitions', 'text', (c) => c.notNull())
    .addColumn('refreshed_at', 'bigint', (c) => c.notNull())
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresStamps(db);
  else await sqliteStamps(db);
}

async function postgresStamps(db: Kysely<unknown>): Promise<void> {
  // Added without a default first, so existing rows keep NULL (no table rewrite), then the default.
  await sql`ALTER TABLE events ADD COLUMN drain_xid xid8`.execute(db);
  await sql`ALTER TABLE events ALTER COLUMN drain_xid SET DEFAULT pg_current_xact_id()`.execute(db);
  await sql`CREATE INDEX events_drain_xid_idx ON events (drain_xid)`.execute(db);
  await sql`ALTER TABLE exposures ADD COLUMN change_xid xid8`.execute(db);
  await sql`ALTER TABLE exposures ALTER COLUMN change_xid SET DEFAULT pg_current_xact_id()`.execute(db);
  await sql`CREATE INDEX exposures_change_xid_idx ON exposures (experiment_id, change_xid)`.execute(db);
  await sql`CREATE FUNCTION exposures_stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.change_xid := pg_current_xact_id();
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER exposures_stamp_change BEFORE UPDATE OF superseded_at ON exposures
    FOR EACH ROW WHEN (OLD.superseded_at IS DISTINCT FROM NEW.superseded_at) EXECUTE FUNCTION exposures_stamp_change()`.execute(db);
}

async function sqliteStamps(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE exposures ADD COLUMN superseded_seq integer`.execute(db);
  await sql`CREATE INDEX exposures_superseded_seq_idx ON exposures (superseded_seq) WHERE superseded_seq IS NOT NULL`.execute(db);
  await sql`CREATE TRIGGER exposures_superseded_seq AFTER UPDATE OF superseded_at ON exposures
    WHEN OLD.superseded_at IS NOT NEW.superseded_at
    BEGIN
      UPDATE exposures SET superseded_seq = (SELECT COALESCE(MAX(superseded_seq), 0) + 1 FROM exposures WHERE superseded_seq IS NOT NULL)
      WHERE rowid = NEW.rowid;
    END`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`DROP TRIGGER exposures_stamp_change ON exposures`.execute(db);
    await sql`DROP FUNCTION exposures_stamp_change()`.execute(db);
    await sql`ALTER TABLE exposures DROP COLUMN change_xid`.execute(db);
    await sql`ALTER TABLE events DROP COLUMN drain_xid`.execute(db);
  } else {
    await sql`DROP TRIGGER exposures_superseded_seq`.execute(db);
    await sql`DROP INDEX exposures_superseded_seq_idx`.execute(db);
    await sql`ALTER TABLE exposures DROP COLUMN superseded_seq`.execute(db);
  }
  for (const table of ['analysis_rollup_state', 'analysis_rollup_values', 'analysis_rollup_units']) await db.schema.dropTable(table).execute();
}

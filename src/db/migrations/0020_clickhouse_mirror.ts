import type { Kysely } from 'kysely';

// ClickHouse (docs/analysis.md "ClickHouse", issue #34): per experiment, the watermark up to which
// its exposures were copied into ClickHouse's exposures table, and the version the copies got
// (ClickHouse keeps the newest version of each exposure row: its superseded mark).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('clickhouse_exposure_marks')
    .addColumn('experiment_id', 'text', (c) => c.primaryKey())
    .addColumn('watermark', 'text', (c) => c.notNull())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('clickhouse_exposure_marks').execute();
}

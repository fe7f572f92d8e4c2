import type { Kysely } from 'kysely';

// ClickHouse incremental analysis (docs/analysis.md "Incremental analysis in ClickHouse", issue #34):
// the drain sequence. Every drain into ClickHouse takes the next number here inside the buffer's
// transaction and writes it on its rows (events.drain_seq), so drains commit in the order of
// their numbers (the row lock holds the next drainer until the commit), and the committed number
// is a watermark in the order events became visible: a rollup refresh reads the rows numbered
// after the last one it read, up to the committed number.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('clickhouse_drain_sequence')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute();
  await db
    .insertInto('clickhouse_drain_sequence' as never)
    .values({ id: 1, seq: 0 } as never)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('clickhouse_drain_sequence').execute();
}

/**
 * The exposures the analysis joins, copied into ClickHouse (docs/analysis.md "ClickHouse") before
 * each computation there. Assignment and exposure logging never wait on ClickHouse: the primary
 * database stays the one that takes them, and this copy catches up from a watermark in the order
 * rows became visible (store/watermark.ts): the units whose exposures were inserted or superseded
 * since are copied again, every row of theirs with a newer version, so the newest version of each
 * exposure row in ClickHouse carries its superseded mark. Without a watermark that holds, all the
 * experiment's exposures are copied.
 *
 * The watermark is read before the rows: a change committed in between is copied now and again
 * next time (the same row with a newer version), never missed.
 */
import { sql, type RawBuilder } from 'kysely';
import type { ClickHouse } from '../../../clickhouse/client.js';
import type { ClickHouseStoreDeps } from './deps.js';
import { currentWatermark, unitsChangedAfter, watermarkHolds, type Watermark } from '../store/watermark.js';

/** Exposure rows per page read from the primary database and per insert into ClickHouse. */
const PAGE = 50_000;

interface MirrorRow {
  id: string;
  workspace_id: string;
  experiment_id: string;
  unit_id: string;
  variant_key: string;
  exposed_at: unknown;
  superseded_at: unknown;
  source_key_id: string | null;
  dimension_values: string | null;
}

async function page(ctx: ClickHouseStoreDeps, experimentId: string, changed: RawBuilder<unknown> | null, after: string): Promise<MirrorRow[]> {
  const only = changed === null ? sql`` : sql` AND x.unit_id IN (${changed})`;
  const result = await sql<MirrorRow>`SELECT x.id AS id, x.workspace_id AS workspace_id, x.experiment_id AS experiment_id, x.unit_id AS unit_id,
      x.variant_key AS variant_key, x.exposed_at AS exposed_at, x.superseded_at AS superseded_at, x.source_key_id AS source_key_id,
      a.dimension_values AS dimension_values
    FROM exposures AS x LEFT JOIN assignments AS a ON a.experiment_id = x.experiment_id AND a.unit_id = x.unit_id
    WHERE x.experiment_id = ${experimentId} AND x.id > ${after}${only}
    ORDER BY x.id LIMIT ${PAGE}`.execute(ctx.db);
  return result.rows;
}

async function copy(ctx: ClickHouseStoreDeps, ch: ClickHouse, experimentId: string, changed: RawBuilder<unknown> | null, version: number): Promise<number> {
  let after = '';
  let copied = 0;
  for (;;) {
    const rows = await page(ctx, experimentId, changed, after);
    if (rows.length === 0) return copied;
    const values = rows.map((row) => ({
      ...row,
      exposed_at: Number(row.exposed_at),
      superseded_at: row.superseded_at === null ? null : Number(row.superseded_at),
      version,
    }));
    await ch.client.insert({ table: 'exposures', values, format: 'JSONEachRow' });
    copied += rows.length;
    after = (rows.at(-1) as MirrorRow).id;
    if (rows.length < PAGE) return copied;
  }
}

/** Brings ClickHouse's copy of the experiment's exposures up to date; returns the rows copied. */
export async function mirrorExposures(ctx: ClickHouseStoreDeps, ch: ClickHouse, experimentId: string): Promise<number> {
  const watermark = await currentWatermark(ctx.db, ctx.seam);
  const mark = await ctx.db.selectFrom('clickhouse_exposure_marks').selectAll().where('experiment_id', '=', experimentId).executeTakeFirst();
  const previous = mark ? (JSON.parse(mark.watermark) as Watermark) : null;
  const trusted = previous !== null && (await watermarkHolds(ctx.db, ctx.seam, previous));
  const version = Math.max(Number(mark?.version ?? 0) + 1, ctx.clock.now());
  const copied = await copy(ctx, ch, experimentId, trusted ? unitsChangedAfter(previous, experimentId) : null, version);
  const values = { watermark: JSON.stringify(watermark), version };
  await ctx.db
    .insertInto('clickhouse_exposure_marks')
    .values({ experiment_id: experimentId, ...values })
    .onConflict((oc) => oc.column('experiment_id').doUpdateSet(values))
    .execute();
  return copied;
}

/**
 * bench:analysis's facts (bench-facts.ts seedAnalysisFacts: seedUnits, then seedEvents with 1 in 97
 * purchases late) generated inside ClickHouse from numbers(), row for row the same ids, unit ids,
 * keys, JSON properties and times as the SQL seed writes, so that 100M events seed in minutes
 * instead of going through a client. The exposures go straight into ClickHouse's copy of them;
 * markMirrorCurrent tells the mirror (clickhouse/mirror.ts) that nothing is left to copy.
 */
import type { ClickHouse } from '../../src/clickhouse/client.js';
import type { AppContext } from '../../src/context.js';
import { currentWatermark } from '../../src/features/analysis/store/watermark.js';
import { ANALYSIS_T0, DAY, EVENTS_PER_UNIT } from './analysis-seed.js';
import type { FactScope, SeedProgress } from './bench-facts.js';

/** Rows per INSERT ... SELECT (a progress line each); the insert writes parts of about 1M rows, as it would on its own. */
const CHUNK = 5_000_000;
/** The version the seeded exposure rows carry: a time, as the mirror's versions are (it writes newer ones). */
const SEEDED_VERSION = ANALYSIS_T0;

const padded = (prefix: string, n: string) => `concat('${prefix}', leftPad(toString(${n}), 10, '0'))`;

function exposuresSelect(scope: FactScope): string {
  return `SELECT ${padded('x', 'number')}, {workspace:String}, {experiment:String}, ${padded('u', 'number')},
      if(number % 2 = 0, 'control', 'treatment'), toInt64(${scope.t0}) + toInt64(number % 86400) * 1000, NULL, NULL, NULL, ${SEEDED_VERSION}
    FROM numbers({from:UInt64}, {count:UInt64})`;
}

/** Event n is unit i = n mod units's event number j = n div units, as in seedEvents. */
function eventsSelect(scope: FactScope, units: number): string {
  return `SELECT ${padded('e', 'n')}, {workspace:String}, ${padded('u', 'i')},
      multiIf(j < 3, 'page_load', j = 3, 'view', buys, 'purchase', 'other'),
      multiIf(j < 3, concat('{"timing":{"load_ms":', toString(100 + (i * 7 + j) % 200), '}}'),
              j = 4, concat('{"order":{"total":', toString(10 + i % 90), '.5}}'), '{}'),
      occurred, occurred + if(late, ${8 * DAY}, 1000), toUInt8(late)
    FROM (SELECT number AS n, number % ${units} AS i, intDiv(number, ${units}) AS j,
            (i % 1000) < if(i % 2 = 0, 100, 110) AS buys, j = 4 AND buys AND i % 97 = 0 AS late,
            toInt64(${scope.t0}) + toInt64(i % 86400) * 1000 + toInt64(j + 1) * 60000 AS occurred
          FROM numbers({from:UInt64}, {count:UInt64}))`;
}

async function insertChunks(ch: ClickHouse, insert: string, scope: FactScope, total: number, onProgress?: SeedProgress): Promise<void> {
  for (let from = 0; from < total; from += CHUNK) {
    onProgress?.(from, total);
    const count = Math.min(CHUNK, total - from);
    await ch.client.command({
      query: insert,
      query_params: { workspace: scope.workspaceId, experiment: scope.experimentId, from, count },
      clickhouse_settings: { max_insert_threads: '2' },
    });
  }
  onProgress?.(total, total);
}

/** Seeds `units` exposures and their events (EVENTS_PER_UNIT each) into ClickHouse. */
export async function seedClickHouseFacts(ch: ClickHouse, scope: FactScope, units: number, onProgress?: (what: string) => SeedProgress): Promise<void> {
  const exposures = `INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source_key_id, dimension_values, version)
    ${exposuresSelect(scope)}`;
  await insertChunks(ch, exposures, scope, units, onProgress?.('exposures'));
  const events = `INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late) ${eventsSelect(scope, units)}`;
  await insertChunks(ch, events, scope, units * EVENTS_PER_UNIT, onProgress?.('events'));
}

/** The mirror's mark of the experiment at the primary database's current watermark: its exposures are all in ClickHouse already. */
export async function markMirrorCurrent(ctx: AppContext, experimentId: string): Promise<void> {
  const watermark = JSON.stringify(await currentWatermark(ctx.db, ctx.seam));
  await ctx.db.insertInto('clickhouse_exposure_marks').values({ experiment_id: experimentId, watermark, version: SEEDED_VERSION }).execute();
}

/** Rows and active parts of ClickHouse's events table (FINAL reads merge across parts). */
export async function eventsTableShape(ch: ClickHouse): Promise<{ rows: number; parts: number }> {
  const result = await ch.client.query({
    query: `SELECT sum(rows) AS rows, count() AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'events' AND active`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ rows: string; parts: string }>();
  return { rows: Number(row?.rows ?? 0), parts: Number(row?.parts ?? 0) };
}

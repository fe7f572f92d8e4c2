/**
 * ClickHouse migration 0004 (docs/analysis.md "ClickHouse", "Integers beyond 64 bits"): events
 * drained before the drain wrote integer literals beyond 64 bits in exponent form (json-text.ts)
 * keep a properties text that ClickHouse's JSON functions reject whole, so no number is read at
 * any path of such an event, where the SQL stores read them all. This rewrites those texts once,
 * to exactly what the drain writes today.
 *
 * - Candidates are found in ClickHouse itself: a run of 20 digits (or `-` and 19) that the JSON
 *   functions refuse (`isValidJSON` is 0 for such a text). Every event drained since the fix is
 *   valid JSON there, so the scan finds only old rows; each candidate's new text is computed here
 *   by the drain's own function, and a text it leaves as it is (no such literal after all) is not
 *   touched.
 * - Rows are rewritten by a mutation (ALTER TABLE ... UPDATE, waited for on every replica), a page
 *   of ids at a time: `properties` is no part of the sorting key, and a mutation keeps each row
 *   where it is, with its drain number, so no read ever sees a row twice or not at all.
 * - Snapshots computed by the incremental rollups summed those events without their numbers: when
 *   any row is rewritten, the rollups' committed states are dropped, so each experiment's next
 *   incremental refresh rebuilds from the events (as `--rebuild` does).
 *
 * Re-running it finds nothing (rewritten texts are valid JSON), so a migration interrupted between
 * pages is finished by the next `migrate`.
 */
import type { ClickHouse } from './client.js';
import { clickhouseJsonText } from './json-text.js';

/** Candidates read, and rows rewritten by one mutation. */
const PAGE = 5_000;

/** The local table (every shard's, on a cluster) that a mutation changes. */
function mutated(ch: ClickHouse, table: string): string {
  return ch.cluster === null ? table : `${table}_local ON CLUSTER ${ch.cluster}`;
}

async function candidates(ch: ClickHouse, after: string): Promise<Array<{ id: string; properties: string }>> {
  const result = await ch.client.query({
    query: `SELECT id, properties FROM events
      WHERE id > {after:String} AND match(properties, '\\\\d{20}|-\\\\d{19}') AND NOT isValidJSON(properties)
      ORDER BY id LIMIT ${PAGE}`,
    query_params: { after },
    format: 'JSONEachRow',
  });
  return result.json<{ id: string; properties: string }>();
}

async function rewrite(ch: ClickHouse, ids: string[], texts: string[]): Promise<void> {
  await ch.client.command({
    query: `ALTER TABLE ${mutated(ch, 'events')} UPDATE properties = transform(id, {ids:Array(String)}, {texts:Array(String)}, properties)
      WHERE id IN {ids:Array(String)}`,
    query_params: { ids, texts },
    clickhouse_settings: { mutations_sync: '2' },
  });
}

/** Rewrites every old-form properties text in ClickHouse's events; returns how many rows changed. */
export async function rewriteExponentForm(ch: ClickHouse): Promise<number> {
  let after = '';
  let rewritten = 0;
  for (;;) {
    const page = await candidates(ch, after);
    // One text per id (copies of one event, left by drains before 0003, hold the same text).
    const texts = new Map(page.map((row) => [row.id, row.properties]));
    const changed = [...texts].map(([id, text]) => ({ id, text: clickhouseJsonText(text), before: text })).filter((row) => row.text !== row.before);
    if (changed.length > 0) {
      await rewrite(
        ch,
        changed.map((row) => row.id),
        changed.map((row) => row.text),
      );
      rewritten += changed.length;
    }
    if (page.length < PAGE) break;
    after = (page.at(-1) as { id: string }).id;
  }
  if (rewritten > 0) await ch.client.command({ query: `TRUNCATE TABLE IF EXISTS ${mutated(ch, 'rollup_state')}` });
  return rewritten;
}

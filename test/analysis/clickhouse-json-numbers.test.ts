import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../support/clickhouse.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { jsonNumber, Params } from '../../src/features/analysis/clickhouse/sql-parts.js';
import { persistToClickHouse } from '../../src/clickhouse/events.js';
import { sqliteSeam } from '../../src/db/dialect.js';
import type { ClickHouse } from '../../src/clickhouse/client.js';

/**
 * docs/analysis.md "ClickHouse": the number a metric reads from an event's properties in
 * ClickHouse (jsonNumber) must be the number the SQL dialects read from the same JSON text: JSON
 * integers and reals only (not strings, booleans, nulls, arrays or objects), at the exact path (a
 * key with a dot is one key), the same Float64. Each case's properties are stored by the drain's
 * own insert, as every event is; the reference is SQLite's reading of the same text. That holds for
 * a text with an integer literal beyond 64 bits too (the API writes them for 2^64 <= |n| < 1e21):
 * ClickHouse's JSON functions (simdjson) would reject the whole text, so the drain stores such
 * literals in exponent form (src/clickhouse/json-text.ts).
 */
const reason = clickhouseUnavailable();
const suite = reason ? describe.skip : describe;
if (reason) console.warn(`[verdict] ${reason}: the ClickHouse JSON number tests are skipped.`);

/** As validate.ts stores properties (JSON.stringify of the parsed body), plus texts it cannot produce. */
const PROPERTIES: string[] = [
  ...[
    { amount: 12 },
    { amount: 12.5 },
    { amount: -0.0001 },
    { amount: 0.1 + 0.2 },
    { amount: 5e-324 },
    { amount: 1.7976931348623157e308 },
    { amount: -0 },
    { amount: 1e21 },
    { amount: 1e20 },
    { amount: 2 ** 63 },
    { amount: 2 ** 64 },
    { amount: 5, id: 1e20 },
    { amount: -(2 ** 63) - 4096 },
    { amount: 2 ** 53 + 2 },
    { amount: '12' },
    { amount: true },
    { amount: null },
    { amount: [1, 2] },
    { amount: { value: 3 } },
    { order: { total: 8 } },
    { 'order.total': 7 },
    { order: { total: 9 }, 'order.total': 10 },
    { order: [{ total: 3 }] },
    { order: { '': 5 } },
    { '': 4 },
    { 'a%2Eb': 3, a: { b: 2 } },
    { 'a b': 6, ünï: 7, $x: 1, '0': 11 },
    { order: { 'total value': 40, 'a"b': 1.25, 'back\\slash': 2, "it's": 4, 'x-y': 5 } },
    { amount: 3, note: 'a "quoted": text. With a dot' },
    { order: { total: 8, ids: [2 ** 64, -(2 ** 64), 2 ** 70] }, amount: 2, note: '18446744073709551616' },
    { amount: [{ value: 2 ** 65 }], order: { total: -(2 ** 66) }, '0': 2 ** 64 + 2 ** 13 },
    { note: 'x.y":', amount: 4 },
    {},
  ].map((value) => JSON.stringify(value)),
  '{"amount":123456789012345678901234567890}',
  '{"amount":-9223372036854775809}',
  '{"amount":18446744073709551615}',
  '{"amount":1E2}',
  '{"order":{"total":100000000000000000001,"a\\"b":-99999999999999999999},"amount":7,"a":{"b":[18446744073709551616]}}',
];

const PATHS: string[][] = [
  ['amount'],
  ['amount', 'value'],
  ['order', 'total'],
  ['order.total'],
  ['order', ''],
  [''],
  ['a', 'b'],
  ['a%2Eb'],
  ['a b'],
  ['ünï'],
  ['$x'],
  ['0'],
  ['order', '0', 'total'],
  ['order', 'total value'],
  ['order', 'a"b'],
  ['order', 'back\\slash'],
  ['order', "it's"],
  ['order', 'x-y'],
];

/** SQLite's reading of each text at each path (a JSON number, else null); -0 reads as 0 in every sum. */
async function sqliteNumbers(server: TestServer): Promise<Array<Array<number | null>>> {
  return Promise.all(
    PROPERTIES.map(async (text) =>
      Promise.all(
        PATHS.map(async (keys) => {
          const result = await sql<{
            v: number | null;
          }>`SELECT ${sqliteSeam.jsonNumberAt('t.properties', keys)} AS v FROM (SELECT ${text} AS properties) AS t`.execute(server.ctx.db);
          return result.rows[0]?.v ?? null;
        }),
      ),
    ),
  );
}

/** ClickHouse's reading (jsonNumber) of each stored row at each path, in PROPERTIES's order. */
async function clickhouseNumbers(ch: ClickHouse, table: string, workspaceId: string): Promise<Array<Array<number | null>>> {
  const params = new Params();
  const columns = PATHS.map((keys, index) => `${jsonNumber(params, keys)} AS v${index}`).join(', ');
  const result = await ch.client.query({
    query: `SELECT e.id AS id, ${columns} FROM ${table} AS e WHERE e.workspace_id = ${params.string(workspaceId)} ORDER BY id`,
    query_params: params.values,
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_denormals: 1 },
  });
  const rows = await result.json<Record<string, number | string | null>>();
  expect(rows.length).toBe(PROPERTIES.length);
  return rows.map((row) => PATHS.map((_, index) => (row[`v${index}`] === null ? null : Number(row[`v${index}`]))));
}

const zeroed = (rows: Array<Array<number | null>>) => rows.map((row) => row.map((value) => (value === 0 ? 0 : value)));

function eventRows(workspaceId: string) {
  return PROPERTIES.map((properties, index) => ({
    id: `e${String(index).padStart(4, '0')}`,
    workspace_id: workspaceId,
    unit_id: `u${index}`,
    event_key: 'buy',
    properties,
    occurred_at: Date.UTC(2033, 0, 1) + index,
    received_at: Date.UTC(2033, 0, 1) + index,
    late: 0 as const,
    client_event_id: null,
  }));
}

suite(`JSON numbers of events in ClickHouse${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { config: { clickhouse: TEST_CLICKHOUSE } });
  });
  afterAll(async () => server?.close());

  it('reads the number SQLite reads from the text at every path, of texts with integers beyond 64 bits too', async () => {
    const ch = server.ctx.clickhouse!;
    await persistToClickHouse(ch)(server.ctx.db, eventRows('w-json-numbers'));
    expect(zeroed(await clickhouseNumbers(ch, 'events', 'w-json-numbers'))).toEqual(zeroed(await sqliteNumbers(server)));
  });
});

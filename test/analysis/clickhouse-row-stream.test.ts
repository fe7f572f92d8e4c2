import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouse } from '../../src/clickhouse/client.js';
import { clickhouseUnavailable } from '../support/clickhouse.js';

/**
 * A large result read a batch at a time (src/clickhouse/row-stream.ts): the totals of a first
 * incremental build read one row per live unit, and the embedded engine's connection would hold
 * the whole result in memory (at 20M units the process died of a full heap). The embedded engine
 * writes such a result to a file in its directory and the rows are read back from there.
 */
const reason = clickhouseUnavailable();
const engine = reason ? describe.skip : describe;

// Values a text format could break: quotes, backslashes, tabs, line breaks, non-ASCII, NULL, exact decimals, 64-bit integers.
const ROWS = `SELECT number AS n, toUInt64(18446744073709551615 - number) AS big,
    concat('u', toString(number), if(number % 7 = 0, 'it''s \\\\ a\\ttab\\nline é🙂', '')) AS unit_id,
    if(number % 5 = 0, NULL, toDecimal256(number, 20) / 3) AS d, {tag:String} AS tag
  FROM numbers({count:UInt64}) ORDER BY n`;

engine(`reading a result a batch at a time${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let directory: string;
  let ch: ClickHouse;
  const exportsOf = () => path.join(directory, 'verdict-exports');
  const leftFiles = () => (fs.existsSync(exportsOf()) ? fs.readdirSync(exportsOf()) : []);

  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-row-stream-'));
    ch = await openClickHouse({ kind: 'embedded', path: directory, cluster: null });
  });

  afterAll(async () => {
    await ch?.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('gives the rows of one query, in order and unchanged, in batches of at most the size asked, and keeps no file', async () => {
    const query_params = { tag: "it's \\ a\ttag", count: 25_000 };
    const whole = await (await ch.client.query({ query: ROWS, query_params, format: 'JSONEachRow' })).json<Record<string, unknown>>();
    const batches: Record<string, unknown>[][] = [];
    for await (const batch of ch.rowBatches({ query: ROWS, query_params }, 10_000)) batches.push(batch);

    expect(batches.map((batch) => batch.length)).toEqual([10_000, 10_000, 5_000]);
    expect(batches.flat()).toEqual(whole);
    expect(whole[7]).toMatchObject({ unit_id: "u7it's \\ a\ttab\nline é🙂", tag: "it's \\ a\ttag" });
    expect(whole[5]?.d).toBeNull();
    expect(leftFiles()).toEqual([]);
  });

  it('removes its file when the reader stops early or the statement fails', async () => {
    for await (const batch of ch.rowBatches({ query: ROWS, query_params: { tag: 'x', count: 30_000 } }, 1_000)) {
      expect(batch).toHaveLength(1_000);
      break;
    }
    expect(leftFiles()).toEqual([]);

    const failing = async () => {
      for await (const batch of ch.rowBatches({ query: 'SELECT throwIf(number = 3) AS t FROM numbers(10)', query_params: {} }, 10)) expect(batch).toBeDefined();
    };
    await expect(failing()).rejects.toThrow(/throwIf|FUNCTION_THROW_IF_VALUE_IS_NON_ZERO/);
    expect(leftFiles()).toEqual([]);
  });

  it('clears the files a killed process left behind when the engine is opened again', async () => {
    await ch.close();
    fs.mkdirSync(exportsOf(), { recursive: true });
    fs.writeFileSync(path.join(exportsOf(), 'left-by-a-killed-read.jsonl'), '{"n":1}\n');
    ch = await openClickHouse({ kind: 'embedded', path: directory, cluster: null });
    expect(leftFiles()).toEqual([]);
  });
});

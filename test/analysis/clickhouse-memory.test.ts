import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouse } from '../../src/clickhouse/client.js';
import { EMBEDDED_MAX_MEMORY, memorySettings } from '../../src/clickhouse/settings.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { clickhouseUnavailable } from '../support/clickhouse.js';

/**
 * The memory bound of ClickHouse statements (docs/deployment.md "ClickHouse", "Memory"):
 * VERDICT_CLICKHOUSE_MAX_MEMORY, the embedded engine's default, and a statement that spills to
 * disk past half the limit instead of failing or growing the process.
 */
const clickhouseEnv = (memory?: string) => ({
  VERDICT_CLICKHOUSE_URL: 'chdb:/tmp/verdict-memory-test',
  ...(memory === undefined ? {} : { VERDICT_CLICKHOUSE_MAX_MEMORY: memory }),
});

describe('VERDICT_CLICKHOUSE_MAX_MEMORY', () => {
  it('reads sizes in bytes, KB, MB and GB, and 0 for no limit', () => {
    expect(loadConfig(clickhouseEnv('4GB')).clickhouse?.maxMemoryBytes).toBe(4 * 2 ** 30);
    expect(loadConfig(clickhouseEnv('512mb')).clickhouse?.maxMemoryBytes).toBe(512 * 2 ** 20);
    expect(loadConfig(clickhouseEnv('100000000')).clickhouse?.maxMemoryBytes).toBe(100_000_000);
    expect(loadConfig(clickhouseEnv('0')).clickhouse?.maxMemoryBytes).toBe(0);
    expect(loadConfig(clickhouseEnv()).clickhouse?.maxMemoryBytes).toBeNull();
  });

  it('rejects what is not a size, or below 64MB, naming the variable', () => {
    for (const bad of ['lots', '4 TB', '-1', '1MB']) {
      expect(() => loadConfig(clickhouseEnv(bad))).toThrow(ConfigError);
      expect(() => loadConfig(clickhouseEnv(bad))).toThrow(/VERDICT_CLICKHOUSE_MAX_MEMORY/);
    }
  });

  it('bounds the embedded engine by default, a server only when set, and nothing at 0', () => {
    expect(memorySettings({ kind: 'embedded', maxMemoryBytes: null })).toMatchObject({
      max_memory_usage: String(EMBEDDED_MAX_MEMORY),
      max_bytes_before_external_group_by: String(EMBEDDED_MAX_MEMORY / 2),
      max_bytes_before_external_sort: String(EMBEDDED_MAX_MEMORY / 2),
      join_algorithm: 'grace_hash',
      max_bytes_in_join: String(EMBEDDED_MAX_MEMORY / 4),
    });
    expect(memorySettings({ kind: 'server', maxMemoryBytes: null })).toEqual({});
    expect(memorySettings({ kind: 'server', maxMemoryBytes: 2 ** 30 })).toMatchObject({ max_memory_usage: String(2 ** 30) });
    expect(memorySettings({ kind: 'embedded', maxMemoryBytes: 0 })).toEqual({});
  });
});

const reason = clickhouseUnavailable();
const engine = reason ? describe.skip : describe;

engine(`statements under the memory bound${reason ? ` (skipped: ${reason})` : ''}`, () => {
  let ch: ClickHouse;
  const limit = 512 * 2 ** 20;
  beforeAll(async () => {
    ch = await openClickHouse({ kind: 'embedded', path: ':memory:', cluster: null, maxMemoryBytes: limit });
  });
  afterAll(async () => ch?.close());

  const first = async (query: string, settings: Record<string, string> = {}) => {
    const result = await ch.client.query({ query, format: 'JSONEachRow', clickhouse_settings: settings });
    return (await result.json<Record<string, unknown>>())[0];
  };
  const numbers = (row: Record<string, unknown> | undefined) => Object.fromEntries(Object.entries(row ?? {}).map(([key, value]) => [key, Number(value)]));

  it('runs every statement with the limit and the spill thresholds', async () => {
    const row = await first(
      "SELECT getSetting('max_memory_usage') AS m, getSetting('max_bytes_before_external_group_by') AS g, getSetting('join_algorithm') AS j",
    );
    expect([Number(row?.m), Number(row?.g)]).toEqual([limit, limit / 2]);
    expect(String(row?.j)).toContain('grace_hash');
  });

  it('aggregates and joins more than the limit holds by spilling, with the same answer as without a limit', { timeout: 300_000 }, async () => {
    // 12M groups of a String key: more aggregation state than 512 MB holds.
    const grouped = `SELECT count() AS groups, sum(c) AS rows FROM (SELECT toString(number % 12000000) AS k, count() AS c FROM numbers(16000000) GROUP BY k)`;
    expect(numbers(await first(grouped))).toEqual({ groups: 12_000_000, rows: 16_000_000 });
    // The same statement without the spill threshold runs out of its memory: the spill is what bounds it.
    await expect(first(grouped, { max_bytes_before_external_group_by: '0' })).rejects.toThrow(/memory limit/i);
    // A RIGHT JOIN (as the full computation's) whose 10M-row side does not fit an in-memory hash table under 512 MB.
    const joined = `SELECT count() AS n, countIf(e.v IS NULL) AS alone FROM (SELECT toString(number % 6000000) AS k, number AS v FROM numbers(8000000)) AS e
      RIGHT JOIN (SELECT toString(number) AS k FROM numbers(10000000)) AS x ON e.k = x.k`;
    expect(numbers(await first(joined))).toEqual({ n: 12_000_000, alone: 4_000_000 });
    await expect(first(joined, { join_algorithm: 'hash', max_bytes_in_join: '0' })).rejects.toThrow(/memory limit/i);
  });
});

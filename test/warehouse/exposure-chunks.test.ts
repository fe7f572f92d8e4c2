// A ClickHouse source receives the experiment's exposures as array parameters, which a server
// bounds per field (`http_max_field_value_size`, 128 KiB by default; readonly=1 cannot raise it).
// Past a budget the per-unit statement runs once per chunk of units: here through the embedded
// engine, a statement run in chunks returns the rows of the same statement run once, unit for unit,
// ids that need escaping included. (No ClickHouse server runs on this machine, so the server's own
// refusal of an oversized field is not exercised.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouseSource } from '../../src/features/data-sources/connectors/clickhouse.js';
import type { SourceSession } from '../../src/features/data-sources/read.js';
import { CLICKHOUSE_EXPOSURE_BYTES, exposureChunks, rowsWithExposures } from '../../src/features/analysis/warehouse/aggregate.js';
import { clickhouseDialect } from '../../src/features/analysis/warehouse/clickhouse-sql.js';
import type { ShippedExposure } from '../../src/features/analysis/warehouse/spec.js';
import { unitStatement } from '../../src/features/analysis/warehouse/unit-statement.js';
import { chdbAvailable } from '../support/clickhouse.js';
import { ALLOW_PRIVATE, createChdbSource, type ChdbSource } from './sources.js';

const T0 = Date.UTC(2026, 0, 1);
const UNITS = 600;
/** Unit ids a parameter must escape: quotes, backslashes, a tab, non-ASCII. */
const unitId = (i: number) => (i % 50 === 0 ? `u'${i}\\x\t${i}é` : `unit-${String(i).padStart(5, '0')}`);

const exposures: ShippedExposure[] = Array.from({ length: UNITS }, (_, i) => ({
  unit_id: unitId(i),
  variant_key: i % 2 === 0 ? 'control' : 'treatment',
  exposed_at: T0 + i * 1000,
}));

describe('exposure chunks for a ClickHouse source', () => {
  it('keeps every exposure once, in order, and every chunk within the budget', () => {
    const budget = 2_000;
    const chunks = exposureChunks(exposures, budget);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.flat()).toEqual(exposures);
    for (const chunk of chunks) {
      const quoted = (values: string[]) => `[${values.map((v) => `'${v.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\t', '\\t')}'`).join(',')}]`;
      expect(Buffer.byteLength(quoted(chunk.map((row) => row.unit_id)))).toBeLessThanOrEqual(budget);
      expect(Buffer.byteLength(quoted(chunk.map((row) => row.variant_key)))).toBeLessThanOrEqual(budget);
    }
    expect(exposureChunks(exposures, CLICKHOUSE_EXPOSURE_BYTES)).toHaveLength(1);
    expect(exposureChunks([], budget)).toEqual([]);
  });

  it('puts a unit whose id alone passes the budget in a chunk of its own rather than dropping it', () => {
    const long = { unit_id: 'x'.repeat(500), variant_key: 'control', exposed_at: T0 };
    const chunks = exposureChunks([exposures[1] as ShippedExposure, long, exposures[3] as ShippedExposure], 100);
    expect(chunks).toEqual([[exposures[1]], [long], [exposures[3]]]);
  });
});

const suite = chdbAvailable() ? describe : (name: string) => describe.skip(`${name} (the embedded ClickHouse engine is not installed)`, () => undefined);

suite('a per-unit statement run in chunks on the embedded engine', () => {
  let source: ChdbSource;
  let session: SourceSession;

  beforeAll(async () => {
    const rows = exposures.flatMap((exposure, i) =>
      Array.from(
        { length: (i % 4) + 1 },
        (_, k) =>
          `('${exposure.unit_id.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replaceAll('\t', '\\t')}', ${exposure.exposed_at + 60_000 * (k + 1)}, ${i % 3 === 0 ? 'NULL' : (i * 0.25 + k).toFixed(2)})`,
      ),
    );
    source = await createChdbSource([
      'CREATE TABLE facts (unit_id String, at_ms Int64, amount Nullable(Float64)) ENGINE = MergeTree ORDER BY unit_id',
      `INSERT INTO facts VALUES ${rows.join(', ')}`,
    ]);
    session = await openClickHouseSource(source.url, { ...ALLOW_PRIVATE, statementTimeoutMs: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await session?.close();
    await source?.drop();
  });

  const statement = unitStatement(
    clickhouseDialect,
    [
      {
        fact: {
          sql: 'SELECT unit_id, fromUnixTimestamp64Milli(at_ms) AS at, amount FROM facts',
          unit_id_column: 'unit_id',
          timestamp_column: 'at',
          column: 'amount',
          filter: null,
        },
        from: 'x.exposed_at',
        to: 'x.exposed_at + 86400000',
      },
    ],
    { stop: null, settleBefore: T0 + 400_000, readFrom: null },
  );
  const sorted = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => String(a.unit_id).localeCompare(String(b.unit_id)));

  it('returns the rows of one statement, unit for unit, from many chunks', async () => {
    let runs = 0;
    const counting: SourceSession = { ...session, rows: (sql, params) => (runs++, session.rows(sql, params)) };
    const once = await rowsWithExposures('clickhouse', counting, exposures, statement);
    expect(runs).toBe(1);
    const chunked = await rowsWithExposures('clickhouse', counting, exposures, statement, 1_500);
    expect(runs - 1).toBe(exposureChunks(exposures, 1_500).length);
    expect(once).toHaveLength(UNITS);
    expect(new Set(once.map((row) => row.unit_id))).toEqual(new Set(exposures.map((row) => row.unit_id)));
    expect(sorted(chunked)).toEqual(sorted(once));
  });

  it('still runs the statement once without exposures, so the source checks it', async () => {
    await expect(rowsWithExposures('clickhouse', session, [], 'SELECT no_such_column FROM facts')).rejects.toThrow(/no_such_column/);
    expect(await rowsWithExposures('clickhouse', session, [], statement)).toEqual([]);
  });
});

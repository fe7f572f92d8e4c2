/**
 * Running Verdict's statements on a source (incremental.ts): the exposures passed as the dialect
 * takes them, the row filters checked again, each statement read-only and bounded by the session's
 * statement timeout.
 */
import { readOnlyExpressionDefect, SourceError, type SourceSession } from '../../data-sources/read.js';
import type { DataSourceKind } from '../../../db/tables/warehouse.js';
import { clickhouseDialect } from './clickhouse-sql.js';
import { postgresDialect } from './postgres-sql.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';

type Row = Record<string, unknown>;

/**
 * How many bytes of each array parameter one ClickHouse statement carries. The client sends
 * parameters past 4 KiB as multipart form fields, and a server bounds each field by its
 * `http_max_field_value_size` (128 KiB by default), which readonly=1 cannot raise: more exposures
 * than that go in several statements over disjoint units.
 */
export const CLICKHOUSE_EXPOSURE_BYTES = 96 * 1024;

/** An upper bound on a string's bytes in a ClickHouse array parameter: quoted, escaped, a comma. */
function paramBytes(value: string): number {
  let escapes = 0;
  for (const char of value) if (char === "'" || char === '\\' || char < ' ') escapes += 3;
  return Buffer.byteLength(value) + escapes + 3;
}

/** The exposures in runs whose unit and variant parameters each fit `budget` bytes. */
export function exposureChunks(exposures: readonly ShippedExposure[], budget: number): ShippedExposure[][] {
  const chunks: ShippedExposure[][] = [];
  let chunk: ShippedExposure[] = [];
  let units = 0;
  let variants = 0;
  for (const exposure of exposures) {
    const unitBytes = paramBytes(exposure.unit_id);
    const variantBytes = paramBytes(exposure.variant_key);
    if (chunk.length > 0 && (units + unitBytes > budget || variants + variantBytes > budget)) {
      chunks.push(chunk);
      chunk = [];
      units = 0;
      variants = 0;
    }
    chunk.push(exposure);
    units += unitBytes;
    variants += variantBytes;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * Runs a statement with the exposures: PostgreSQL's positional arrays, or ClickHouse's named ones.
 * Its rows are per unit, so on ClickHouse the statement runs once per chunk of units and the rows
 * are put together; each run reads the fact table again.
 */
export async function rowsWithExposures(
  kind: DataSourceKind,
  session: SourceSession,
  exposures: readonly ShippedExposure[],
  text: string,
  budget = CLICKHOUSE_EXPOSURE_BYTES,
): Promise<Row[]> {
  if (kind === 'clickhouse') {
    // Without exposures the statement still runs once: the source checks it all the same.
    const chunks = exposures.length === 0 ? [[]] : exposureChunks(exposures, budget);
    let rows: Row[] = [];
    for (const chunk of chunks) {
      const params = { units: chunk.map((row) => row.unit_id), variants: chunk.map((row) => row.variant_key), exposed: chunk.map((row) => row.exposed_at) };
      const chunkRows = await session.rows(text, params);
      rows = rows.length === 0 ? chunkRows : rows.concat(chunkRows);
    }
    return rows;
  }
  return session.rows(text, [exposures.map((row) => row.unit_id), exposures.map((row) => row.variant_key), exposures.map((row) => String(row.exposed_at))]);
}

/** The row filters are placed in a WHERE: checked again here, whoever built the spec. */
export function checkFilters(kind: DataSourceKind, metric: WarehouseMetricSpec): void {
  for (const item of [metric, ...(metric.denominator ? [metric.denominator] : [])]) {
    const defect = item.fact.filter === null ? null : readOnlyExpressionDefect(kind, item.fact.filter);
    if (defect) throw new SourceError('query', `the row filter ${defect}`);
  }
}

export const dialectOf = (kind: DataSourceKind) => (kind === 'clickhouse' ? clickhouseDialect : postgresDialect);

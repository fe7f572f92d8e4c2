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

/** Runs a statement with the exposures: PostgreSQL's positional arrays, or ClickHouse's named ones. */
export async function rowsWithExposures(kind: DataSourceKind, session: SourceSession, exposures: readonly ShippedExposure[], text: string): Promise<Row[]> {
  const units = exposures.map((row) => row.unit_id);
  const variants = exposures.map((row) => row.variant_key);
  if (kind === 'clickhouse') return session.rows(text, { units, variants, exposed: exposures.map((row) => row.exposed_at) });
  return session.rows(text, [units, variants, exposures.map((row) => String(row.exposed_at))]);
}

/** The row filters are placed in a WHERE: checked again here, whoever built the spec. */
export function checkFilters(kind: DataSourceKind, metric: WarehouseMetricSpec): void {
  for (const item of [metric, ...(metric.denominator ? [metric.denominator] : [])]) {
    const defect = item.fact.filter === null ? null : readOnlyExpressionDefect(kind, item.fact.filter);
    if (defect) throw new SourceError('query', `the row filter ${defect}`);
  }
}

export const dialectOf = (kind: DataSourceKind) => (kind === 'clickhouse' ? clickhouseDialect : postgresDialect);

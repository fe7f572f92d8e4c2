/**
 * Per-variant totals of metrics read from fact tables, computed on their source: the analysis
 * store contract's VariantTotals, so what follows (caps, effects, the recommendation) does not ask
 * where they came from. On PostgreSQL and ClickHouse sources, each metric is one read-only
 * statement bounded by the statement timeout (statement.ts), and only per-variant rows come back.
 */
import { readOnlyExpressionDefect, SourceError, type SourceSession } from '../../data-sources/read.js';
import type { VariantTotals } from '../store/contract.js';
import { addVariantRow, toNumber } from '../store/fold.js';
import type { DataSourceKind } from '../../../db/tables/warehouse.js';
import { clickhouseDialect } from './clickhouse-sql.js';
import { postgresDialect } from './postgres-sql.js';
import { metricStatement } from './statement.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';

export interface WarehouseAggregation {
  /** Per variant, one entry per metric in the order given. */
  totals: Map<string, VariantTotals>;
  /** Fact rows the statements counted (inside a window). */
  rowsCounted: number;
}

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

export async function aggregateOnSource(
  kind: DataSourceKind,
  session: SourceSession,
  exposures: readonly ShippedExposure[],
  metrics: readonly WarehouseMetricSpec[],
  eventsBefore: number | null,
): Promise<WarehouseAggregation> {
  const totals = new Map<string, VariantTotals>();
  let rowsCounted = 0;
  for (const [index, metric] of metrics.entries()) {
    checkFilters(kind, metric);
    const rows = await rowsWithExposures(kind, session, exposures, metricStatement(dialectOf(kind), metric, eventsBefore));
    for (const row of rows) {
      rowsCounted += toNumber(row.ev);
      // Each statement answers one metric (columns n0, s0 ...): folded into position `index`.
      const single = new Map<string, VariantTotals>();
      addVariantRow(single, row, 1);
      const folded = single.get(String(row.variant_key)) as VariantTotals;
      const entry = totals.get(folded.variant_key) ?? { variant_key: folded.variant_key, units: folded.units, metrics: [] };
      entry.metrics[index] = folded.metrics[0] as VariantTotals['metrics'][number];
      totals.set(folded.variant_key, entry);
    }
  }
  return { totals, rowsCounted };
}

/**
 * Per-variant totals of metrics read from fact tables, computed on their source: the analysis
 * store contract's VariantTotals, so what follows (caps, effects, the recommendation) does not ask
 * where they came from. On PostgreSQL and ClickHouse sources, each metric is one read-only
 * statement bounded by the statement timeout, and only per-variant rows come back.
 */
import { readOnlyExpressionDefect, SourceError, type SourceSession } from '../../data-sources/read.js';
import type { VariantTotals } from '../store/contract.js';
import { addVariantRow, toNumber } from '../store/fold.js';
import type { DataSourceKind } from '../../../db/tables/warehouse.js';
import { clickhouseMetricStatement } from './clickhouse-sql.js';
import { postgresMetricStatement } from './postgres-sql.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';

export interface WarehouseAggregation {
  /** Per variant, one entry per metric in the order given. */
  totals: Map<string, VariantTotals>;
  /** Fact rows the statements counted (inside a window). */
  rowsCounted: number;
}

/** The live exposures as the three parameter arrays the statement unnests. */
function exposureParameters(exposures: readonly ShippedExposure[]): [string[], string[], string[]] {
  return [exposures.map((row) => row.unit_id), exposures.map((row) => row.variant_key), exposures.map((row) => String(row.exposed_at))];
}

/** One metric's per-variant rows: the exposures as PostgreSQL's positional arrays, or ClickHouse's named ones. */
async function metricRows(
  kind: DataSourceKind,
  session: SourceSession,
  [units, variants, exposed]: [string[], string[], string[]],
  metric: WarehouseMetricSpec,
  eventsBefore: number | null,
) {
  if (kind === 'clickhouse') {
    const statement = clickhouseMetricStatement(metric, eventsBefore);
    return session.rows(statement.text, { units, variants, exposed: exposed.map(Number), ...statement.params });
  }
  const statement = postgresMetricStatement(metric, eventsBefore);
  return session.rows(statement.text, [units, variants, exposed, ...statement.params]);
}

export async function aggregateOnSource(
  kind: DataSourceKind,
  session: SourceSession,
  exposures: readonly ShippedExposure[],
  metrics: readonly WarehouseMetricSpec[],
  eventsBefore: number | null,
): Promise<WarehouseAggregation> {
  const totals = new Map<string, VariantTotals>();
  const shipped = exposureParameters(exposures);
  let rowsCounted = 0;
  for (const [index, metric] of metrics.entries()) {
    // The filter is placed in a WHERE: checked again here, whoever built the spec.
    const defect = metric.fact.filter === null ? null : readOnlyExpressionDefect(kind, metric.fact.filter);
    if (defect) throw new SourceError('query', `the row filter ${defect}`);
    const rows = await metricRows(kind, session, shipped, metric, eventsBefore);
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

/**
 * The pieces a source's statements are written from, once for both dialects (docs/warehouse.md
 * "The analysis on the source"): the experiment's live exposures `x` (shipped as three arrays) and
 * a fact table's rows (unit, epoch ms, the column as a float) its filter keeps. unit-statement.ts
 * builds the per-unit statement from them; Verdict's own numbers (window, stop) are literals.
 */
import type { WarehouseMetricSpec } from './spec.js';

/** What differs between PostgreSQL and ClickHouse. */
export interface StatementDialect {
  quote(name: string): string;
  /** The exposures as rows (unit_id, variant_key, exposed_at). */
  exposures: string;
  /** The unit id as text, the timestamp as epoch milliseconds, a column as a nullable float. */
  text(expression: string): string;
  epochMs(expression: string): string;
  float(expression: string): string;
  /** A unit's rows of one period: `e` joined to `x` on the unit, within [from, to). */
  periodRows(rows: string, from: string, to: string): string;
}

export function literal(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return String(value);
}

export function factRows(dialect: StatementDialect, fact: WarehouseMetricSpec['fact']): string {
  const value = fact.column === null ? dialect.float('NULL') : dialect.float(`f.${dialect.quote(fact.column)}`);
  const where = fact.filter === null ? '' : `\n    WHERE (${fact.filter}\n    )`;
  return `SELECT ${dialect.text(`f.${dialect.quote(fact.unit_id_column)}`)} AS unit_id, ${dialect.epochMs(`f.${dialect.quote(fact.timestamp_column)}`)} AS at, ${value} AS v
    FROM (${fact.sql}
    ) AS f${where}`;
}

/** q in billionths, as sql/percentile-cap.ts takes it (0.99 is 990000000 exactly). */
export const PERCENTILE_SCALE = 1_000_000_000;

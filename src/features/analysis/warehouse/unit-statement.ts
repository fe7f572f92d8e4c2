/**
 * The statement of an incremental refresh (docs/warehouse.md "Incremental refresh"): per unit and
 * period (the metric's window, a ratio's denominator's, the CUPED lookback), the count of rows,
 * of numbers and their sum, split at `settleBefore` into the rows Verdict keeps as the unit's
 * settled state (older) and the rows it counts this time only (newer, re-read next time). Only
 * rows from `readFrom` on are read (the previous refresh's cutoff; null reads the unit's whole
 * history, for units exposed or re-exposed since). Rows come back per unit and period with rows.
 */
import type { FactSource } from './spec.js';
import { factRows, literal, type StatementDialect } from './statement.js';

/** A period of a unit's rows as SQL over the exposure `x.exposed_at` (epoch ms): [from, to). */
export interface UnitPeriod {
  fact: FactSource;
  from: string;
  to: string;
}

export interface UnitReadBounds {
  /** Rows at or after this (the experiment's stop) count in no period; null for none. */
  stop: number | null;
  /** Rows before this are returned as settled (oc, ocv, os), the others as fresh (fc, fcv, fs). */
  settleBefore: number;
  /** Rows before this are not read; null reads every row. */
  readFrom: number | null;
}

/** The fact rows of one table, from `readFrom` on: the bound sits on the table's rows, where the source can use it. */
function boundedFactRows(dialect: StatementDialect, fact: FactSource, readFrom: number | null): string {
  const rows = factRows(dialect, fact);
  if (readFrom === null) return rows;
  return `SELECT * FROM (${rows}) AS b WHERE b.at >= ${literal(readFrom)}`;
}

function periodTotals(dialect: StatementDialect, rows: string, period: UnitPeriod, bounds: UnitReadBounds): string {
  const settle = literal(bounds.settleBefore);
  const stop = bounds.stop === null ? '' : ` AND e.at < ${literal(bounds.stop)}`;
  const part = (prefix: string, when: string) =>
    [
      `SUM(CASE WHEN ${when} THEN 1 ELSE 0 END) AS ${prefix}c`,
      `SUM(CASE WHEN ${when} AND e.v IS NOT NULL THEN 1 ELSE 0 END) AS ${prefix}cv`,
      `SUM(CASE WHEN ${when} THEN e.v ELSE NULL END) AS ${prefix}s`,
    ].join(', ');
  return `SELECT x.unit_id AS unit_id, ${part('o', `e.at < ${settle}`)}, ${part('f', `e.at >= ${settle}`)}
    FROM ${dialect.periodRows(rows, period.from, period.to + stop)}
    GROUP BY x.unit_id`;
}

/** Rows (period, unit_id, oc, ocv, os, fc, fcv, fs): period is the index in `periods`. */
export function unitStatement(dialect: StatementDialect, periods: readonly UnitPeriod[], bounds: UnitReadBounds): string {
  const facts: FactSource[] = [];
  const factOf = (fact: FactSource) => {
    const found = facts.findIndex((item) => JSON.stringify(item) === JSON.stringify(fact));
    return found >= 0 ? found : facts.push(fact) - 1;
  };
  const totals = periods.map((period, index) => `p${index} AS (\n    ${periodTotals(dialect, `e${factOf(period.fact)}`, period, bounds)}\n  )`);
  const rows = facts.map((fact, index) => `e${index} AS (\n    ${boundedFactRows(dialect, fact, bounds.readFrom)}\n  )`);
  const selects = periods.map((_, index) => `SELECT ${index} AS period, p${index}.unit_id AS unit_id, oc, ocv, os, fc, fcv, fs FROM p${index}`);
  return `WITH x AS (
    ${dialect.exposures}
  ), ${[...rows, ...totals].join(', ')}
  ${selects.join('\n  UNION ALL ')}`;
}

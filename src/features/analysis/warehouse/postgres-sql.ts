/**
 * PostgreSQL's side of the statements (statement.ts): the exposures arrive as three parameter
 * arrays ($1 unit ids, $2 variant keys, $3 exposed_at in epoch ms) unnested into rows, and a
 * unit's rows of a period are joined with the period in the join condition.
 */
import type { StatementDialect } from './statement.js';

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export const postgresDialect: StatementDialect = {
  quote: quoteIdentifier,
  exposures: 'SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) AS x(unit_id, variant_key, exposed_at)',
  text: (expression) => `CAST(${expression} AS text)`,
  epochMs: (expression) => `floor(extract(epoch FROM ${expression}) * 1000)::bigint`,
  float: (expression) => `CAST(${expression} AS double precision)`,
  periodRows: (rows, from, to) => `x JOIN ${rows} AS e ON e.unit_id = x.unit_id AND e.at >= ${from} AND e.at < ${to}`,
};

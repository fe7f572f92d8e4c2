/**
 * ClickHouse's side of the statements (statement.ts): the exposures arrive as three array
 * parameters zipped into rows. A unit's rows are joined on the unit alone and the period applied
 * after the join (a join condition with inequalities would need a setting, and readonly=1 changes
 * none).
 */
import type { StatementDialect } from './statement.js';

export function quoteClickHouseIdentifier(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``;
}

export const clickhouseDialect: StatementDialect = {
  quote: quoteClickHouseIdentifier,
  exposures: `SELECT t.1 AS unit_id, t.2 AS variant_key, t.3 AS exposed_at
    FROM (SELECT arrayJoin(arrayZip({units:Array(String)}, {variants:Array(String)}, {exposed:Array(Int64)})) AS t)`,
  text: (expression) => `toString(${expression})`,
  epochMs: (expression) => `toUnixTimestamp64Milli(toDateTime64(${expression}, 3))`,
  float: (expression) => `CAST(${expression} AS Nullable(Float64))`,
  periodRows: (rows, from, to) => `x INNER JOIN ${rows} AS e ON e.unit_id = x.unit_id WHERE e.at >= ${from} AND e.at < ${to}`,
};

/**
 * The statements Verdict runs on an assignment source (docs/warehouse.md "Experiments assigned
 * elsewhere"), for PostgreSQL and ClickHouse. A unit counts once, in the variant of its first
 * exposure (earliest timestamp; on a tie, the smallest variant key), as a unit Verdict assigns
 * keeps its first variant; its later rows, in that variant or another, change nothing. Rows
 * without a unit id, variant key or timestamp are left out.
 */
import type { DataSourceKind } from '../../db/tables/warehouse.js';
import type { QueryParams } from '../data-sources/read.js';

/** The source's SQL and the four columns it names. */
export interface AssignmentQuery {
  sql: string;
  unit_id_column: string;
  experiment_key_column: string;
  variant_key_column: string;
  timestamp_column: string;
}

interface Dialect {
  quote(name: string): string;
  text(expression: string): string;
  epochMs(expression: string): string;
  /** The experiment key and variant keys parameters. */
  key: string;
  variants(expression: string): string;
  params(key: string, variants: readonly string[]): QueryParams;
  /** The timestamp as text, as the source writes it. */
  stamp(expression: string): string;
}

const postgres: Dialect = {
  quote: (name) => `"${name.replaceAll('"', '""')}"`,
  text: (expression) => `CAST(${expression} AS text)`,
  epochMs: (expression) => `floor(extract(epoch FROM ${expression}) * 1000)::bigint`,
  key: '$1',
  variants: (expression) => `${expression} = ANY($2::text[])`,
  params: (key, variants) => [key, [...variants]],
  stamp: (expression) => `CAST(${expression} AS text)`,
};

const clickhouse: Dialect = {
  quote: (name) => `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``,
  text: (expression) => `toString(${expression})`,
  epochMs: (expression) => `toUnixTimestamp64Milli(toDateTime64(${expression}, 3))`,
  key: '{experiment_key:String}',
  variants: (expression) => `has({experiment_variants:Array(String)}, ${expression})`,
  params: (key, variants) => ({ experiment_key: key, experiment_variants: [...variants] }),
  stamp: (expression) => `toString(${expression})`,
};

const dialectOf = (kind: DataSourceKind): Dialect => (kind === 'clickhouse' ? clickhouse : postgres);

/** Every exposure row of the source as (experiment_key, unit_id, variant_key, exposed_at ms, at), rows missing a value left out. */
function exposureRows(dialect: Dialect, query: AssignmentQuery, onlyKey: boolean): string {
  const column = (name: string) => `a.${dialect.quote(name)}`;
  const [unit, experiment, variant, time] = [query.unit_id_column, query.experiment_key_column, query.variant_key_column, query.timestamp_column].map(column);
  const keyFilter = onlyKey ? ` AND ${dialect.text(experiment as string)} = ${dialect.key}` : '';
  return `SELECT ${dialect.text(experiment as string)} AS experiment_key, ${dialect.text(unit as string)} AS unit_id, ${dialect.text(variant as string)} AS variant_key,
      ${dialect.epochMs(time as string)} AS exposed_at, ${time} AS at
    FROM (${query.sql}
    ) AS a
    WHERE ${unit} IS NOT NULL AND ${variant} IS NOT NULL AND ${time} IS NOT NULL${keyFilter}`;
}

/** Rows ranked per (experiment, unit): rank 1 is the unit's first exposure. */
function ranked(dialect: Dialect, query: AssignmentQuery, onlyKey: boolean): string {
  return `SELECT r.experiment_key AS experiment_key, r.unit_id AS unit_id, r.variant_key AS variant_key, r.exposed_at AS exposed_at, r.at AS at,
      row_number() OVER (PARTITION BY r.experiment_key, r.unit_id ORDER BY r.exposed_at, r.variant_key) AS rank
    FROM (${exposureRows(dialect, query, onlyKey)}
    ) AS r`;
}

/**
 * One experiment's first exposure per unit, kept when its variant is one of `variants`: rows
 * (unit_id, variant_key, exposed_at in epoch ms), the statement's only parameters its own.
 */
export function firstExposuresStatement(
  kind: DataSourceKind,
  query: AssignmentQuery,
  experimentKey: string,
  variants: readonly string[],
): { sql: string; params: QueryParams } {
  const dialect = dialectOf(kind);
  const sql = `SELECT f.unit_id AS unit_id, f.variant_key AS variant_key, f.exposed_at AS exposed_at
    FROM (${ranked(dialect, query, true)}
    ) AS f
    WHERE f.rank = 1 AND ${dialect.variants('f.variant_key')}`;
  return { sql, params: dialect.params(experimentKey, variants) };
}

/** Per experiment key and variant of first exposure: units, and units seen in another variant too; aggregates only. */
export function summaryStatement(kind: DataSourceKind, query: AssignmentQuery): string {
  const dialect = dialectOf(kind);
  return `SELECT f.experiment_key AS experiment_key, f.variant_key AS variant_key, COUNT(*) AS units,
      SUM(CASE WHEN s.variants > 1 THEN 1 ELSE 0 END) AS several,
      ${dialect.stamp('MIN(s.first_at)')} AS first_timestamp, ${dialect.stamp('MAX(s.last_at)')} AS last_timestamp
    FROM (${ranked(dialect, query, false)}
    ) AS f
    INNER JOIN (
      SELECT r.experiment_key AS experiment_key, r.unit_id AS unit_id, COUNT(DISTINCT r.variant_key) AS variants, MIN(r.at) AS first_at, MAX(r.at) AS last_at
      FROM (${exposureRows(dialect, query, false)}
      ) AS r
      GROUP BY r.experiment_key, r.unit_id
    ) AS s ON s.experiment_key = f.experiment_key AND s.unit_id = f.unit_id
    WHERE f.rank = 1
    GROUP BY f.experiment_key, f.variant_key`;
}

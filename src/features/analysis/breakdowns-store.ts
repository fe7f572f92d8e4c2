/**
 * The SQL of the breakdowns (decisions.md section 10, "Dimensions"): per dimension value and
 * variant, the units and the primary metric's sufficient statistics, computed by the database.
 *
 * - A unit's value of a dimension is read from its assignment's `dimension_values` (stored at the
 *   first assignment); the `source` breakdown reads the exposure's `source_key_id`.
 * - First, one statement per breakdown finds its 20 values with the most units (ties by value).
 * - Then one pass (per chunk on SQLite, as aggregate-store.ts does) reduces each unit to its
 *   variant, the primary metric's value and one small integer per breakdown: the index of its
 *   value among the top ones, NONE_BUCKET when it has none or OTHER_BUCKET for any other value.
 *   The per-unit rows are materialised once and grouped by (bucket, variant) for each breakdown,
 *   so what leaves the database is at most 22 rows per breakdown and variant, however many units
 *   or distinct values there are.
 */
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DialectSeam } from '../../db/dialect.js';
import { sqliteJsonPath } from '../../db/dialect.js';
import type { ReadPool } from '../../db/read-pool.js';
import { EMPTY_TOTALS, eventJoin, metricColumns, toNumber, unitValueColumns, type MetricSpec, type VariantTotals } from './aggregate-store.js';

/** Values shown per breakdown; the rest are summed into `(other)`. */
export const TOP_VALUES = 20;
export const NONE_BUCKET = -1;
export const OTHER_BUCKET = -2;

/** A breakdown: an experiment dimension (from the assignment) or the exposure's source key. */
export interface BreakdownKey {
  name: string;
  kind: 'dimension' | 'source';
}

export interface BreakdownInput {
  workspaceId: string;
  experimentId: string;
  breakdowns: readonly BreakdownKey[];
  /** The primary metric with its cap resolved, or null (units only). */
  primary: MetricSpec | null;
  eventsBefore: number | null;
  chunkUnits: number | null;
}

/** Per breakdown: its top values (bucket i is values[i]) and the totals per bucket and variant. */
export interface BreakdownTotals {
  key: BreakdownKey;
  values: string[];
  /** bucket -> variant key -> totals (metrics holds the primary's totals, or nothing). */
  buckets: Map<number, Map<string, VariantTotals>>;
}

type Row = Record<string, unknown>;

/** The unit's raw value of a breakdown (text or NULL), for a query over exposures `x` joined to assignments `a`. */
function rawValue(seam: DialectSeam, key: BreakdownKey): RawBuilder<string | null> {
  if (key.kind === 'source') return sql<string | null>`x.source_key_id`;
  if (seam.name === 'sqlite') return sql<string | null>`json_extract(a.dimension_values, ${sqliteJsonPath([key.name])})`;
  return sql<string | null>`((a.dimension_values)::json ->> ${key.name})`;
}

function usesAssignments(breakdowns: readonly BreakdownKey[]): boolean {
  return breakdowns.some((key) => key.kind === 'dimension');
}

const assignmentJoin = sql` LEFT JOIN assignments AS a ON a.experiment_id = x.experiment_id AND a.unit_id = x.unit_id`;

/** The TOP_VALUES values of one breakdown with the most live units, most first. */
function topValuesQuery(seam: DialectSeam, input: BreakdownInput, key: BreakdownKey): RawBuilder<Row> {
  const join = key.kind === 'dimension' ? assignmentJoin : sql``;
  return sql<Row>`SELECT t.v AS v, COUNT(*) AS units FROM (
      SELECT ${rawValue(seam, key)} AS v FROM exposures AS x${join}
      WHERE x.experiment_id = ${input.experimentId} AND x.superseded_at IS NULL
    ) AS t WHERE t.v IS NOT NULL GROUP BY t.v ORDER BY COUNT(*) DESC, t.v LIMIT ${sql.lit(TOP_VALUES)}`;
}

/** The unit's bucket of a breakdown: the index of its value among the top values, or NONE/OTHER. */
function bucketOf(seam: DialectSeam, key: BreakdownKey, values: readonly string[]): RawBuilder<number> {
  // The assignment columns are not functionally dependent on PostgreSQL's per-unit group key
  // (the exposure id); MAX picks the one joined row's value.
  const raw = key.kind === 'dimension' ? sql`MAX(${rawValue(seam, key)})` : rawValue(seam, key);
  const known = values.map((value, index) => sql` WHEN ${raw} = ${value} THEN ${sql.lit(index)}`);
  return sql<number>`(CASE WHEN ${raw} IS NULL THEN ${sql.lit(NONE_BUCKET)}${sql.join(known, sql``)} ELSE ${sql.lit(OTHER_BUCKET)} END)`;
}

interface Chunk {
  after: string | null;
  through: string | null;
}

/** One statement: the per-unit rows once, then one GROUP BY (bucket, variant) per breakdown. */
function chunkQuery(seam: DialectSeam, input: BreakdownInput, tops: readonly string[][], chunk: Chunk): RawBuilder<Row> {
  const metrics = input.primary ? [input.primary] : [];
  const buckets = input.breakdowns.map((key, index) => sql`, ${bucketOf(seam, key, tops[index] ?? [])} AS ${sql.ref(`g${index}`)}`);
  const join = usesAssignments(input.breakdowns) ? assignmentJoin : sql``;
  const lower = chunk.after === null ? sql`` : sql` AND x.unit_id > ${chunk.after}`;
  const upper = chunk.through === null ? sql`` : sql` AND x.unit_id <= ${chunk.through}`;
  const perUnit = sql`SELECT x.variant_key AS variant_key${sql.join(buckets, sql``)}${sql.join(unitValueColumns(seam, metrics), sql``)}
      FROM exposures AS x${join}${eventJoin({ metrics, workspaceId: input.workspaceId, eventsBefore: input.eventsBefore })}
      WHERE x.experiment_id = ${input.experimentId} AND x.superseded_at IS NULL${lower}${upper}
      GROUP BY ${seam.analysisUnitGroup}`;
  const columns = metrics.flatMap((metric, index) => metricColumns(metric, index));
  const selected = sql.join(columns.map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`), sql``);
  const parts = input.breakdowns.map((_, index) => {
    const bucket = sql.ref(`u.g${index}`);
    return sql`SELECT ${sql.lit(index)} AS breakdown, ${bucket} AS bucket, u.variant_key AS variant_key, COUNT(*) AS units${selected} FROM u GROUP BY ${bucket}, u.variant_key`;
  });
  return sql<Row>`WITH u AS MATERIALIZED (${perUnit}) ${sql.join(parts, sql` UNION ALL `)}`;
}

/** The chunks' bounds (unit_id), keyset-paged through the live-exposure index. */
async function chunksOf(executor: Executor, input: BreakdownInput): Promise<Chunk[]> {
  if (input.chunkUnits === null) return [{ after: null, through: null }];
  const chunks: Chunk[] = [];
  let after: string | null = null;
  for (;;) {
    let query = executor.selectFrom('exposures').select('unit_id').where('experiment_id', '=', input.experimentId).where('superseded_at', 'is', null);
    if (after !== null) query = query.where('unit_id', '>', after);
    const row = await query.orderBy('unit_id').limit(1).offset(input.chunkUnits - 1).executeTakeFirst();
    const through: string | null = row?.unit_id ?? null;
    chunks.push({ after, through });
    if (through === null) return chunks;
    after = through;
  }
}

function addRow(result: BreakdownTotals[], row: Row, metricCount: number): void {
  const breakdown = result[toNumber(row.breakdown)];
  if (!breakdown) return;
  const bucket = toNumber(row.bucket);
  const variants = breakdown.buckets.get(bucket) ?? new Map<string, VariantTotals>();
  const key = String(row.variant_key);
  const entry = variants.get(key) ?? { variant_key: key, units: 0, metrics: Array.from({ length: metricCount }, () => ({ ...EMPTY_TOTALS })) };
  entry.units += toNumber(row.units);
  const metric = entry.metrics[0];
  if (metric) {
    metric.n += toNumber(row.n0);
    metric.sum += toNumber(row.s0);
    metric.sum_of_squares += toNumber(row.q0);
    metric.conversions += toNumber(row.c0);
    metric.sum_y += toNumber(row.sy0);
    metric.sum_of_squares_y += toNumber(row.qy0);
    metric.sum_xy += toNumber(row.xy0);
  }
  variants.set(key, entry);
  breakdown.buckets.set(bucket, variants);
}

/** Per breakdown, its top values and per-bucket, per-variant totals of units and the primary metric. */
export async function aggregateBreakdowns(executor: Executor, seam: DialectSeam, reads: ReadPool, input: BreakdownInput): Promise<BreakdownTotals[]> {
  if (input.breakdowns.length === 0) return [];
  const topQueries: CompiledQuery[] = input.breakdowns.map((key) => topValuesQuery(seam, input, key).compile(executor));
  const tops = (await reads.all(topQueries)).map((rows) => rows.map((row) => String(row.v)));
  const chunks = await chunksOf(executor, input);
  const result: BreakdownTotals[] = input.breakdowns.map((key, index) => ({ key, values: tops[index] ?? [], buckets: new Map() }));
  const metricCount = input.primary ? 1 : 0;
  for (const rows of await reads.all(chunks.map((chunk) => chunkQuery(seam, input, tops, chunk).compile(executor)))) {
    for (const row of rows) addRow(result, row, metricCount);
  }
  return result;
}

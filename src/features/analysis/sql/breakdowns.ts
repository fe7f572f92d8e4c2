/**
 * The SQL of the breakdowns (docs/analysis.md "Breakdowns by dimension"): per dimension value and
 * variant, the units and the primary metric's sufficient statistics, computed by the database.
 *
 * - A unit's value of a dimension is read from its assignment's `dimension_values` (stored at the
 *   first assignment); the `source` breakdown reads the exposure's `source_key_id`.
 * - First, one statement finds the 20 values of each breakdown with the most units (ties by
 *   value), reading each unit's raw values once.
 * - Then one pass (per chunk on SQLite, as sql/aggregate.ts does) reduces each unit to its
 *   variant, the primary metric's value and its raw value of each breakdown, materialised once;
 *   each breakdown then groups those rows by (bucket, variant), the bucket being the value's
 *   index among the top ones, NONE_BUCKET without a value or OTHER_BUCKET for any other value.
 *   What leaves the database is at most 22 rows per breakdown and variant, however many units or
 *   distinct values there are. (Reading the raw value once matters: a CASE over 20 values around
 *   the JSON extraction itself would parse the JSON up to 22 times per unit.)
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { metricColumns, valueColumns, valueJoin } from './aggregate.js';
import { liveUnitsOf, unitChunkBounds, unitGroupOf, unitsTable } from './unit-source.js';
import {
  type BreakdownInput,
  type BreakdownKey,
  type BreakdownTotals,
  NONE_BUCKET,
  OTHER_BUCKET,
  TOP_VALUES,
  type UnitSource,
  type VariantTotals,
} from '../store/contract.js';
import { addRow, toNumber } from '../store/fold.js';

type Row = Record<string, unknown>;

/** The unit's raw value of a breakdown (text or NULL), for a query over exposures `x` joined to assignments `a`. */
function rawValue(seam: DialectSeam, key: BreakdownKey, source: UnitSource): RawBuilder<string | null> {
  if (key.kind === 'source') return sql<string | null>`x.source_key_id`;
  // The rollup units keep their assignment's values as of their refresh (sql/rollup/slot-sql.ts replaceUnits).
  return seam.jsonTextAt(source === 'rollups' ? 'x.dimension_values' : 'a.dimension_values', key.name);
}

function usesAssignments(breakdowns: readonly BreakdownKey[], source: UnitSource): boolean {
  return source === 'events' && breakdowns.some((key) => key.kind === 'dimension');
}

const assignmentJoin = sql` LEFT JOIN assignments AS a ON a.experiment_id = x.experiment_id AND a.unit_id = x.unit_id`;

/**
 * The unit's raw value of each breakdown, as columns r{k}, one row per live exposure (in a query
 * grouped per unit the assignment's columns need an aggregate: PostgreSQL's group key, the
 * exposure id, does not determine them; MAX picks the one joined row's value).
 */
export function rawColumns(seam: DialectSeam, breakdowns: readonly BreakdownKey[], grouped: boolean, source: UnitSource): RawBuilder<unknown> {
  return sql.join(
    breakdowns.map((key, index) => {
      const raw = grouped && key.kind === 'dimension' ? sql`MAX(${rawValue(seam, key, source)})` : rawValue(seam, key, source);
      return sql`, ${raw} AS ${sql.ref(`r${index}`)}`;
    }),
    sql``,
  );
}

/**
 * The TOP_VALUES values of every breakdown with the most live units, most first: each unit's raw
 * values are read once (one join, one JSON parse per dimension), then ranked per breakdown.
 */
function topValuesQuery(seam: DialectSeam, input: BreakdownInput): RawBuilder<Row> {
  const source = input.source ?? 'events';
  const join = usesAssignments(input.breakdowns, source) ? assignmentJoin : sql``;
  const parts = input.breakdowns.map((_, index) => {
    const r = sql.ref(`r.r${index}`);
    // Ties in code-point order, as the direct pass ranks them (PostgreSQL's default collation may not be).
    const tie = seam.inCodePointOrder(r);
    return sql`SELECT * FROM (SELECT ${sql.lit(index)} AS breakdown, ${r} AS v, COUNT(*) AS units FROM r WHERE ${r} IS NOT NULL GROUP BY ${r} ORDER BY COUNT(*) DESC, ${tie} LIMIT ${sql.lit(TOP_VALUES)}) AS ${sql.ref(`t${index}`)}`;
  });
  return sql<Row>`WITH r AS MATERIALIZED (SELECT 0 AS unused${rawColumns(seam, input.breakdowns, false, source)} FROM ${unitsTable(source)}${join}
      WHERE ${liveUnitsOf(source, input.experimentId)})
    ${sql.join(parts, sql` UNION ALL `)}`;
}

/** The unit's bucket of breakdown k from its raw value u.r{k}: the value's index among the top values, or NONE/OTHER. */
function bucketOf(index: number, values: readonly string[]): RawBuilder<number> {
  const raw = sql.ref(`u.r${index}`);
  const known = values.map((value, rank) => sql` WHEN ${raw} = ${value} THEN ${sql.lit(rank)}`);
  return sql<number>`(CASE WHEN ${raw} IS NULL THEN ${sql.lit(NONE_BUCKET)}${sql.join(known, sql``)} ELSE ${sql.lit(OTHER_BUCKET)} END)`;
}

interface Chunk {
  after: string | null;
  through: string | null;
}

/**
 * One statement: the per-unit rows (variant, raw values, metric value) materialised once, then
 * one GROUP BY (bucket, variant) per breakdown, the bucket compared on the stored raw value.
 */
function chunkQuery(seam: DialectSeam, input: BreakdownInput, tops: readonly string[][] | null, chunk: Chunk): RawBuilder<Row> {
  const metrics = input.primary ? [input.primary] : [];
  const source = input.source ?? 'events';
  const join = usesAssignments(input.breakdowns, source) ? assignmentJoin : sql``;
  const lower = chunk.after === null ? sql`` : sql` AND x.unit_id > ${chunk.after}`;
  const upper = chunk.through === null ? sql`` : sql` AND x.unit_id <= ${chunk.through}`;
  const values = { metrics, workspaceId: input.workspaceId, eventsBefore: input.eventsBefore, source };
  const perUnit = sql`SELECT x.variant_key AS variant_key${rawColumns(seam, input.breakdowns, true, source)}${sql.join(valueColumns(seam, values), sql``)}
      FROM ${unitsTable(source)}${join}${valueJoin(values)}
      WHERE ${liveUnitsOf(source, input.experimentId)}${lower}${upper}
      GROUP BY ${unitGroupOf(seam, source)}`;
  const columns = metrics.flatMap((metric, index) => metricColumns(metric, index));
  const selected = sql.join(
    columns.map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`),
    sql``,
  );
  // GROUP BY by position: PostgreSQL would not match the bucket expression, whose parameters are
  // numbered anew in each place it appears.
  // Without top values (the direct pass), the raw value itself, and at most DIRECT_ROWS + 1 rows.
  const parts = input.breakdowns.map((_, index) => {
    const bucket = tops === null ? sql.ref(`u.r${index}`) : bucketOf(index, tops[index] ?? []);
    return sql`SELECT ${sql.lit(index)} AS breakdown, ${bucket} AS bucket, u.variant_key AS variant_key, COUNT(*) AS units${selected} FROM u GROUP BY 2, 3`;
  });
  const limit = tops === null ? sql` LIMIT ${sql.lit(DIRECT_ROWS + 1)}` : sql``;
  return sql<Row>`WITH u AS MATERIALIZED (${perUnit}) ${sql.join(parts, sql` UNION ALL `)}${limit}`;
}

/** The chunks' bounds (unit_id), from the live units' order (unit-source.ts). */
async function chunksOf(executor: Executor, reads: ReadPool, input: BreakdownInput): Promise<Chunk[]> {
  if (input.chunkUnits === null) return [{ after: null, through: null }];
  const bounds = await unitChunkBounds(executor, reads, input.source ?? 'events', input.experimentId, input.chunkUnits);
  return bounds.map((through, index) => ({ after: index === 0 ? null : (bounds[index - 1] ?? null), through }));
}

/** Rows a direct-pass statement may return, and distinct values a breakdown may have, before the two-phase pass takes over. */
const DIRECT_ROWS = 5_000;
const DIRECT_VALUES = 5_000;
/** Chunk statements run together in the direct pass (so an early stop wastes little). */
const DIRECT_BATCH = 8;

export type RawTotals = Map<string | null, Map<string, VariantTotals>>;

function unitsIn(variants: ReadonlyMap<string, VariantTotals>): number {
  let units = 0;
  for (const totals of variants.values()) units += totals.units;
  return units;
}

/** Folds a breakdown's per-value totals into its top values, (other) and (none). */
export function foldRaw(key: BreakdownKey, raw: RawTotals, metricCount: number): BreakdownTotals {
  const ranked = [...raw].flatMap(([value, variants]) => (value === null ? [] : [{ value, units: unitsIn(variants), variants }]));
  ranked.sort((a, b) => b.units - a.units || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const buckets = new Map<number, Map<string, VariantTotals>>();
  const merge = (bucket: number, variants: ReadonlyMap<string, VariantTotals>) => {
    for (const totals of variants.values()) {
      const { n0 = 0, s0 = 0, q0 = 0, c0 = 0, sy0 = 0, qy0 = 0, xy0 = 0 } = totalsAsRow(totals);
      addRow(buckets, bucket, { variant_key: totals.variant_key, units: totals.units, n0, s0, q0, c0, sy0, qy0, xy0 }, metricCount);
    }
  };
  ranked.forEach((entry, rank) => merge(rank < TOP_VALUES ? rank : OTHER_BUCKET, entry.variants));
  const none = raw.get(null);
  if (none) merge(NONE_BUCKET, none);
  return { key, values: ranked.slice(0, TOP_VALUES).map((entry) => entry.value), buckets };
}

function totalsAsRow(totals: VariantTotals): Record<string, number> {
  const metric = totals.metrics[0];
  if (!metric) return {};
  return {
    n0: metric.n,
    s0: metric.sum,
    q0: metric.sum_of_squares,
    c0: metric.conversions,
    sy0: metric.sum_y,
    qy0: metric.sum_of_squares_y,
    xy0: metric.sum_xy,
  };
}

/**
 * One pass grouping by each raw value, when every breakdown has few distinct values (the usual
 * case: countries, plans, platforms, API keys): the top values are then ranked here, and the
 * separate top-values statement is saved. Returns null, having kept at most a bounded number of
 * rows, as soon as a statement or a breakdown exceeds the bounds.
 */
async function directPass(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  input: BreakdownInput,
  chunks: readonly Chunk[],
): Promise<BreakdownTotals[] | null> {
  const metricCount = input.primary ? 1 : 0;
  const raw: RawTotals[] = input.breakdowns.map(() => new Map());
  for (let start = 0; start < chunks.length; start += DIRECT_BATCH) {
    const queries = chunks.slice(start, start + DIRECT_BATCH).map((chunk) => chunkQuery(seam, input, null, chunk).compile(executor));
    for (const rows of await reads.all(queries)) {
      if (rows.length > DIRECT_ROWS) return null;
      for (const row of rows)
        addRow(raw[toNumber(row.breakdown)], row.bucket === null || row.bucket === undefined ? null : String(row.bucket), row, metricCount);
    }
    if (raw.some((values) => values.size > DIRECT_VALUES)) return null;
  }
  return input.breakdowns.map((key, index) => foldRaw(key, raw[index] ?? new Map(), metricCount));
}

/** The top values first (one statement), then the pass grouping by bucket. */
async function twoPhasePass(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  input: BreakdownInput,
  chunks: readonly Chunk[],
): Promise<BreakdownTotals[]> {
  const [topRows = []] = await reads.all([topValuesQuery(seam, input).compile(executor)]);
  const tops: string[][] = input.breakdowns.map(() => []);
  for (const row of topRows) tops[toNumber(row.breakdown)]?.push(String(row.v));
  const result: BreakdownTotals[] = input.breakdowns.map((key, index) => ({ key, values: tops[index] ?? [], buckets: new Map() }));
  const metricCount = input.primary ? 1 : 0;
  for (const rows of await reads.all(chunks.map((chunk) => chunkQuery(seam, input, tops, chunk).compile(executor)))) {
    for (const row of rows) addRow(result[toNumber(row.breakdown)]?.buckets, toNumber(row.bucket), row, metricCount);
  }
  return result;
}

/**
 * Per breakdown, its top values and per-bucket, per-variant totals of units and the primary
 * metric. `twoPhase` forces the pass for many distinct values (tests compare the two).
 */
export async function aggregateBreakdowns(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  input: BreakdownInput,
  options: { twoPhase?: boolean } = {},
): Promise<BreakdownTotals[]> {
  if (input.breakdowns.length === 0) return [];
  const chunks = await chunksOf(executor, reads, input);
  const direct = options.twoPhase ? null : await directPass(executor, seam, reads, input, chunks);
  return direct ?? twoPhasePass(executor, seam, reads, input, chunks);
}

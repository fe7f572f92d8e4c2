/**
 * Funnel and retention metrics in the SQL store (store/sequence-contract.ts), on SQLite and
 * PostgreSQL, from raw events in both computation modes:
 * - a funnel is one statement of chained steps: s0 the live units (time: the exposure), s{k} the
 *   units of s{k-1} with an event of step k after its time in s{k-1} (step 1: at or after the
 *   exposure) and before exposed_at + window, its time the earliest such event. The earliest
 *   event of each step leaves the most room for the next, so a unit reaches step k exactly when
 *   some ordered choice of events does;
 * - retention is one statement over the live units: those whose window has ended by `asOf` are
 *   eligible, and convert with an event in [exposed_at + from, exposed_at + to).
 * Each returns rows (variant_key, step, n): step -1 the live units, 0 the eligible ones, k >= 1
 * the units that reached step k.
 */
import { sql, type RawBuilder } from 'kysely';
import type { DialectSeam } from '../../../db/dialect.js';
import { sqliteJsonPath } from '../../../db/dialect.js';
import type { SequenceCondition, SequenceCounts, SequenceInput, SequenceSpec, SequenceStepSpec, SequenceTotals } from '../store/sequence-contract.js';
import { toNumber } from '../store/fold.js';
import type { SqlStoreDeps } from './deps.js';

type Row = Record<string, unknown>;

/** The condition `value` at the path holds, in the JSON type of `value` (a string never equals a number). */
function equalsIn(seam: DialectSeam, condition: SequenceCondition): RawBuilder<unknown> {
  const { keys, value } = condition;
  if (typeof value === 'number') return sql`${seam.jsonNumberAt('e.properties', keys)} = ${value}`;
  if (seam.name === 'sqlite') {
    const path = sqliteJsonPath(keys);
    if (typeof value === 'boolean') return sql`json_type(e.properties, ${path}) = ${value ? 'true' : 'false'}`;
    return sql`(json_type(e.properties, ${path}) = 'text' AND json_extract(e.properties, ${path}) = ${value})`;
  }
  const json = sql`((e.properties)::json #> ${[...keys]}::text[])`;
  if (typeof value === 'boolean') return sql`(json_typeof(${json}) = 'boolean' AND ${json}::text = ${value ? 'true' : 'false'})`;
  return sql`(json_typeof(${json}) = 'string' AND ((e.properties)::json #>> ${[...keys]}::text[]) = ${value})`;
}

const COMPARE = { gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=` } as const;

/** The step's condition on the event `e`, or nothing. A missing path or another type is not equal (neq then holds). */
function conditionOf(seam: DialectSeam, where: SequenceCondition | null): RawBuilder<unknown> {
  if (where === null) return sql``;
  if (where.op === 'eq') return sql` AND ${equalsIn(seam, where)}`;
  if (where.op === 'neq') return sql` AND (CASE WHEN ${equalsIn(seam, where)} THEN 1 ELSE 0 END) = 0`;
  return sql` AND ${seam.jsonNumberAt('e.properties', where.keys)} ${COMPARE[where.op]} ${where.value}`;
}

function stepEvents(seam: DialectSeam, input: SequenceInput, step: SequenceStepSpec): RawBuilder<unknown> {
  const key = step.event_key === null ? sql`` : sql` AND e.event_key = ${step.event_key}`;
  const stop = input.eventsBefore === null ? sql`` : sql` AND e.occurred_at < ${input.eventsBefore}`;
  return sql`e.workspace_id = ${input.workspaceId}${key}${stop}${conditionOf(seam, step.where)}`;
}

function liveUnits(input: SequenceInput): RawBuilder<unknown> {
  return sql`SELECT x.unit_id AS unit_id, x.variant_key AS variant_key, x.exposed_at AS exposed_at, x.exposed_at AS t
    FROM exposures AS x WHERE x.experiment_id = ${input.experimentId} AND x.superseded_at IS NULL`;
}

function funnelQuery(seam: DialectSeam, input: SequenceInput, spec: SequenceSpec): RawBuilder<Row> {
  const steps = spec.steps.map((step, index) => {
    const after = index === 0 ? sql`>=` : sql`>`;
    return sql`, ${sql.ref(`s${index + 1}`)} AS (SELECT p.unit_id AS unit_id, p.variant_key AS variant_key, p.exposed_at AS exposed_at, MIN(e.occurred_at) AS t
      FROM ${sql.ref(`s${index}`)} AS p JOIN events AS e ON e.unit_id = p.unit_id AND ${stepEvents(seam, input, step)}
        AND e.occurred_at ${after} p.t AND e.occurred_at < p.exposed_at + ${spec.window_ms}
      GROUP BY p.unit_id, p.variant_key, p.exposed_at)`;
  });
  const counts = spec.steps.map(
    (_, index) => sql` UNION ALL SELECT variant_key, ${sql.lit(index + 1)} AS step, COUNT(*) AS n FROM ${sql.ref(`s${index + 1}`)} GROUP BY variant_key`,
  );
  return sql<Row>`WITH s0 AS (${liveUnits(input)})${sql.join(steps, sql``)}
    SELECT variant_key, -1 AS step, COUNT(*) AS n FROM s0 GROUP BY variant_key
    UNION ALL SELECT variant_key, 0 AS step, COUNT(*) AS n FROM s0 GROUP BY variant_key${sql.join(counts, sql``)}`;
}

function retentionQuery(seam: DialectSeam, input: SequenceInput, spec: SequenceSpec): RawBuilder<Row> {
  const step = spec.steps[0] as SequenceStepSpec;
  const ended = sql`x.exposed_at + ${spec.window_ms} <= ${input.asOf}`;
  const seen = sql`EXISTS (SELECT 1 FROM events AS e WHERE e.unit_id = x.unit_id AND ${stepEvents(seam, input, step)}
    AND e.occurred_at >= x.exposed_at + ${spec.from_ms} AND e.occurred_at < x.exposed_at + ${spec.window_ms})`;
  const units = sql`FROM exposures AS x WHERE x.experiment_id = ${input.experimentId} AND x.superseded_at IS NULL`;
  return sql<Row>`SELECT x.variant_key AS variant_key, -1 AS step, COUNT(*) AS n ${units} GROUP BY x.variant_key
    UNION ALL SELECT x.variant_key AS variant_key, 0 AS step, COUNT(*) AS n ${units} AND ${ended} GROUP BY x.variant_key
    UNION ALL SELECT x.variant_key AS variant_key, 1 AS step, COUNT(*) AS n ${units} AND ${ended} AND ${seen} GROUP BY x.variant_key`;
}

/** Folds (variant_key, step, n) rows of metric `index` into the totals. */
export function foldSequenceRows(totals: SequenceTotals, rows: readonly Row[], index: number, metrics: readonly SequenceSpec[]): void {
  for (const row of rows) {
    const key = String(row.variant_key);
    const entry = totals.get(key) ?? metrics.map((spec): SequenceCounts => ({ units: 0, eligible: 0, steps: spec.steps.map(() => 0) }));
    totals.set(key, entry);
    const counts = entry[index] as SequenceCounts;
    const step = toNumber(row.step);
    const n = toNumber(row.n);
    if (step === -1) counts.units += n;
    else if (step === 0) counts.eligible += n;
    else counts.steps[step - 1] = (counts.steps[step - 1] ?? 0) + n;
  }
}

export async function sequencesInSql(deps: Pick<SqlStoreDeps, 'db' | 'seam' | 'reads'>, input: SequenceInput): Promise<SequenceTotals> {
  const queries = input.metrics.map((spec) =>
    (spec.kind === 'funnel' ? funnelQuery(deps.seam, input, spec) : retentionQuery(deps.seam, input, spec)).compile(deps.db),
  );
  const totals: SequenceTotals = new Map();
  (await deps.reads.all(queries)).forEach((rows, index) => foldSequenceRows(totals, rows, index, input.metrics));
  return totals;
}

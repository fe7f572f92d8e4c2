/**
 * A plan's history in the SQL store (store/contract.ts, HistoryInput): the units seen in [from, to) in the
 * environment, each from the first time it was seen, and the same per-unit values and sums as a
 * snapshot's (aggregate.ts's unitValueColumns, eventJoin and metricColumns), over one group of
 * units instead of a variant. Events from `to` on count nowhere, as after an experiment's stop.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { eventJoin, metricColumns, unitValueColumns } from './aggregate.js';
import type { MetricSpec, VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS, addVariantRow, toNumber } from '../store/fold.js';
import type { HistoryInput, HistoryTotals } from '../store/contract.js';

/** A count of the events a metric (or a ratio's component) counts in its window: the events its value rests on. */
export function eventCountSpecs(metric: MetricSpec): MetricSpec[] {
  const count = (spec: MetricSpec): MetricSpec => ({
    event_key: spec.event_key,
    kind: 'count',
    aggregation: 'count',
    window_ms: spec.window_ms,
    value_keys: null,
    cap: null,
  });
  return metric.denominator ? [count(metric), count(metric.denominator)] : [count(metric)];
}

/** Every unit seen in the period, with the first time it was seen as its `exposed_at`. */
function unitsSeen(input: HistoryInput): RawBuilder<unknown> {
  return sql`(SELECT s.unit_id AS unit_id, MIN(s.seen_at) AS exposed_at FROM (
      SELECT xp.unit_id AS unit_id, xp.exposed_at AS seen_at FROM exposures AS xp
        INNER JOIN experiments AS ex ON ex.id = xp.experiment_id
        WHERE xp.workspace_id = ${input.workspaceId} AND ex.workspace_id = ${input.workspaceId} AND ex.environment_id = ${input.environmentId}
          AND xp.exposed_at >= ${input.from} AND xp.exposed_at < ${input.to}
      UNION ALL
      SELECT ev.unit_id AS unit_id, ev.occurred_at AS seen_at FROM events AS ev
        WHERE ev.workspace_id = ${input.workspaceId} AND ev.occurred_at >= ${input.from} AND ev.occurred_at < ${input.to}
    ) AS s GROUP BY s.unit_id) AS x`;
}

export async function historyTotals(executor: Executor, seam: DialectSeam, reads: ReadPool, input: HistoryInput): Promise<HistoryTotals> {
  const counts = input.metrics.map(eventCountSpecs);
  const all = [...input.metrics, ...counts.flat()];
  const values = unitValueColumns(seam, all);
  const columns = all.flatMap((metric, index) => metricColumns(metric, index));
  const selected = sql.join(
    columns.map(([alias, expression]) => sql`, ${expression} AS ${sql.ref(alias)}`),
    sql``,
  );
  const join = eventJoin({ metrics: all, workspaceId: input.workspaceId, eventsBefore: input.to });
  const perUnit = sql`SELECT 'history' AS variant_key${sql.join(values, sql``)} FROM ${unitsSeen(input)}${join} GROUP BY x.unit_id, x.exposed_at`;
  const query = sql<Record<string, unknown>>`SELECT u.variant_key AS variant_key, COUNT(*) AS units${selected} FROM (${perUnit}) AS u GROUP BY u.variant_key`;
  const [rows = []] = await reads.all([query.compile(executor)]);
  const totals = new Map<string, VariantTotals>();
  for (const row of rows) addVariantRow(totals, row, all.length);
  const group = totals.get('history');
  const metricTotals = group?.metrics ?? all.map(() => ({ ...EMPTY_TOTALS }));
  let next = input.metrics.length;
  const events = counts.map((specs) => {
    const counted = specs.reduce((total, _, offset) => total + toNumber(metricTotals[next + offset]?.sum), 0);
    next += specs.length;
    return counted;
  });
  return { units: group?.units ?? 0, metrics: metricTotals.slice(0, input.metrics.length), events };
}

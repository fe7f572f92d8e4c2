/**
 * The values of a quantile metric (store/contract.ts quantileValues) in SQLite and PostgreSQL:
 * one statement on the read pool, with the definitions of aggregate.ts (a unit counts once, in
 * the variant of its live exposure; an event counts when exposed_at <= occurred_at <
 * exposed_at + window and before the stop).
 * - event level: one row per counted event with a number at the property path;
 * - unit level: one row per live unit with its value of the metric (unitValue: the sum or mean of
 *   its numbers, NULL without one).
 * Every value leaves the database: the quantile and its interval need the order statistics and
 * each unit's count below the estimate, exactly, not a sketch.
 */
import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import type { DialectSeam } from '../../../db/dialect.js';
import type { QuantileLevel } from '../../../db/tables/catalogue.js';
import type { ReadPool } from '../../../db/read-pool.js';
import { eventJoin, unitValue } from './aggregate.js';
import { unitGroupOf } from './unit-source.js';
import type { LateEventScope, MetricSpec, QuantileRow, QuantileValues } from '../store/contract.js';
import { toNumber } from '../store/fold.js';

type Row = Record<string, unknown>;

function eventValuesQuery(seam: DialectSeam, scope: LateEventScope, metric: MetricSpec) {
  const before = scope.eventsBefore === null ? sql`` : sql` AND e.occurred_at < ${scope.eventsBefore}`;
  const value = seam.jsonNumberAt('e.properties', metric.value_keys ?? []);
  return sql<Row>`SELECT q.variant_key AS variant_key, q.unit_id AS unit_id, q.v AS v, q.ev AS ev FROM (
      SELECT x.variant_key AS variant_key, x.unit_id AS unit_id, ${value} AS v, 1 AS ev
      FROM exposures AS x JOIN events AS e ON e.workspace_id = ${scope.workspaceId} AND e.event_key = ${metric.event_key}
        AND e.unit_id = x.unit_id AND e.occurred_at >= x.exposed_at AND e.occurred_at < x.exposed_at + ${metric.window_ms}${before}
      WHERE x.experiment_id = ${scope.experimentId} AND x.superseded_at IS NULL
    ) AS q WHERE q.v IS NOT NULL`;
}

function unitValuesQuery(seam: DialectSeam, scope: LateEventScope, metric: MetricSpec) {
  const only = { ...metric, denominator: undefined, lookback_ms: null };
  return sql<Row>`SELECT x.variant_key AS variant_key, x.unit_id AS unit_id, ${unitValue(seam, only)} AS v, COUNT(e.event_key) AS ev
      FROM exposures AS x${eventJoin({ workspaceId: scope.workspaceId, eventsBefore: scope.eventsBefore, metrics: [only] })}
      WHERE x.experiment_id = ${scope.experimentId} AND x.superseded_at IS NULL
      GROUP BY ${unitGroupOf(seam, 'events')}`;
}

export async function quantileValues(
  executor: Executor,
  seam: DialectSeam,
  reads: ReadPool,
  scope: LateEventScope,
  metric: MetricSpec,
  level: QuantileLevel,
): Promise<QuantileValues> {
  const query = level === 'event' ? eventValuesQuery(seam, scope, metric) : unitValuesQuery(seam, scope, metric);
  const [rows = []] = await reads.all([query.compile(executor)]);
  let eventsRead = 0;
  const values: QuantileRow[] = rows.map((row) => {
    eventsRead += toNumber(row.ev);
    return { variant_key: String(row.variant_key), unit_id: String(row.unit_id), value: row.v === null || row.v === undefined ? null : toNumber(row.v) };
  });
  return { rows: values, eventsRead };
}

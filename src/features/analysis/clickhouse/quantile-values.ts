/**
 * The values of a quantile metric in ClickHouse: sql/quantile-values.ts's counterpart, with the
 * per-unit values of sql.ts (the same definitions as every other metric there), events of
 * committed drains only. Every value is returned: the quantile is computed exactly from them.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import type { QuantileLevel } from '../../../db/tables/catalogue.js';
import { queryRows, type Drained } from './aggregate.js';
import { liveUnits, unitValuesQuery } from './sql.js';
import { jsonNumber, Params } from './sql-parts.js';
import type { LateEventScope, MetricSpec, QuantileRow, QuantileValues } from '../store/contract.js';
import { toNumber } from '../store/fold.js';

function eventValues(params: Params, scope: LateEventScope & Drained, metric: MetricSpec): string {
  const stop = scope.eventsBefore === null ? '' : ` AND occurred_at < ${params.int(scope.eventsBefore)}`;
  return `SELECT variant_key, unit_id, v, 1 AS ev FROM (
      SELECT x.variant_key AS variant_key, x.unit_id AS unit_id, ${jsonNumber(params, metric.value_keys ?? [])} AS v
      FROM (SELECT unit_id, occurred_at, properties FROM events
            WHERE workspace_id = ${params.string(scope.workspaceId)} AND event_key = ${params.string(metric.event_key)}
              AND drain_seq <= ${params.int(scope.drained)}${stop}) AS e
      INNER JOIN (${liveUnits(params, scope.experimentId)}) AS x ON e.unit_id = x.unit_id
      WHERE e.occurred_at >= x.exposed_at AND e.occurred_at < x.exposed_at + ${params.int(metric.window_ms)}
    ) WHERE v IS NOT NULL`;
}

function unitValues(params: Params, scope: LateEventScope & Drained, metric: MetricSpec): string {
  const only: MetricSpec = { ...metric, denominator: undefined, lookback_ms: null };
  const perUnit = unitValuesQuery(params, { ...scope, source: 'events' }, [only], [{ alias: 'uid', expression: 'unit_id' }]);
  return `SELECT u.variant_key AS variant_key, u.uid AS unit_id, u.m0 AS v, u.ev AS ev FROM (${perUnit}) AS u`;
}

export async function quantileValuesInClickHouse(
  ch: ClickHouse,
  scope: LateEventScope & Drained,
  metric: MetricSpec,
  level: QuantileLevel,
): Promise<QuantileValues> {
  const params = new Params();
  const query = level === 'event' ? eventValues(params, scope, metric) : unitValues(params, scope, metric);
  const rows = await queryRows(ch, query, params);
  let eventsRead = 0;
  const values: QuantileRow[] = rows.map((row) => {
    eventsRead += toNumber(row.ev);
    return { variant_key: String(row.variant_key), unit_id: String(row.unit_id), value: row.v === null || row.v === undefined ? null : toNumber(row.v) };
  });
  return { rows: values, eventsRead };
}

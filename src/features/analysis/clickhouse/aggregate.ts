/**
 * The analysis's reads in ClickHouse (docs/analysis.md "ClickHouse"), the counterparts of
 * sql/aggregate.ts, percentile-cap.ts, late-events.ts, period-totals.ts and sql/breakdowns.ts:
 * each returns what its SQL counterpart returns, so everything above (caps, CUPED, the build, the
 * recommendation) is the same code whichever store computed the sums. One statement per
 * experiment: ClickHouse parallelises it itself, off this process's event loop (the embedded
 * engine runs queries on its own threads).
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { metricAggregates, unitValuesQuery } from './sql.js';
import { Params, type UnitScope } from './sql-parts.js';
import type { Aggregation, AggregationInput, CapScope, LateEvents, LateEventScope, MetricSpec, TopLists, VariantTotals } from '../store/contract.js';
import { addVariantRow, toNumber } from '../store/fold.js';

type Row = Record<string, unknown>;

/** Every read: the exposures' versions of one row share a partition, so FINAL need not merge across partitions. */
export const READ_SETTINGS = { do_not_merge_across_partitions_select_final: 1 } as const;

/** What every read of events needs besides its scope: the committed drain number (clickhouse/events.ts committedDrain). */
export interface Drained {
  drained: number;
}

export async function queryRows(ch: ClickHouse, query: string, params: Params): Promise<Row[]> {
  const result = await ch.client.query({ query, query_params: params.values, format: 'JSONEachRow', clickhouse_settings: READ_SETTINGS });
  return result.json<Row>();
}

/** Live units of the experiment (what a percentile metric's top-value limit is sized by). */
async function countUnits(ch: ClickHouse, experimentId: string): Promise<number> {
  const params = new Params();
  const rows = await queryRows(
    ch,
    `SELECT count() AS units FROM exposures FINAL WHERE experiment_id = ${params.string(experimentId)} AND superseded_at IS NULL`,
    params,
  );
  return toNumber(rows[0]?.units);
}

/**
 * aggregateByVariant's counterpart: per-variant totals, events read and, for a pending percentile
 * cap, each variant's largest nonzero values (groupArraySorted keeps them exactly, in order).
 */
export async function aggregateInClickHouse(
  ch: ClickHouse,
  input: AggregationInput & Drained,
  topLimit: (quantile: number, statementUnits: number) => number,
): Promise<Aggregation> {
  const params = new Params();
  const pending = input.metrics.some((metric) => metric.percentile);
  const units = pending ? await countUnits(ch, input.experimentId) : 0;
  const limits = new Map(
    input.metrics.flatMap((metric, index) => (metric.percentile ? [[index, Math.max(1, topLimit(metric.percentile, units))] as const] : [])),
  );
  const columns = input.metrics.flatMap((metric, index) => metricAggregates(params, metric, index));
  const tops = [...limits].map(([index, limit]) => `groupArraySortedIf(${limit})(-u.m${index}, u.m${index} != 0) AS t${index}`);
  const selected = ['u.variant_key AS variant_key', 'count() AS units', ...columns, 'sum(u.ev) AS ev', ...tops].join(', ');
  const query = `SELECT ${selected} FROM (${unitValuesQuery(params, input, input.metrics)}) AS u GROUP BY u.variant_key ORDER BY u.variant_key`;
  const rows = await queryRows(ch, query, params);
  const totals = new Map<string, VariantTotals>();
  const topLists = new Map<number, TopLists>();
  let eventsRead = 0;
  for (const row of rows) {
    addVariantRow(totals, row, input.metrics.length);
    eventsRead += toNumber(row.ev);
    for (const [index, limit] of limits) {
      const values = (row[`t${index}`] as unknown[]).map((value) => ({ variant_key: String(row.variant_key), value: -toNumber(value) }));
      const lists = topLists.get(index) ?? { statements: [] };
      lists.statements.push({ values, truncated: values.length >= limit });
      topLists.set(index, lists);
    }
  }
  return { totals, tops: topLists, eventsRead };
}

/** q in billionths, as percentile-cap.ts computes the position of the order statistics. */
const SCALE = 1_000_000_000n;

/** percentileCap's counterpart: the type-7 quantile of the nonzero per-unit values, from the two order statistics around it. */
export async function percentileCapInClickHouse(ch: ClickHouse, scope: CapScope & Drained, metric: MetricSpec, quantile: number): Promise<number | null> {
  const only: MetricSpec = { ...metric, denominator: undefined, lookback_ms: null, cap: null, percentile: null };
  const counting = new Params();
  const values = (params: Params) => `SELECT u.m0 AS v FROM (${unitValuesQuery(params, scope, [only])}) AS u WHERE u.m0 != 0`;
  const [counted] = await queryRows(ch, `SELECT count() AS k FROM (${values(counting)})`, counting);
  const count = BigInt(toNumber(counted?.k));
  if (count === 0n) return null;
  const scaled = BigInt(Math.round(quantile * Number(SCALE)));
  const below = ((count - 1n) * scaled) / SCALE;
  const params = new Params();
  const rows = await queryRows(ch, `${values(params)} ORDER BY v LIMIT 2 OFFSET ${params.int(Number(below))}`, params);
  const h = (Number(count - 1n) * Number(scaled)) / Number(SCALE);
  const lower = toNumber(rows[0]?.v);
  const upper = rows[1] === undefined ? lower : toNumber(rows[1].v);
  return lower + (h - Math.floor(h)) * (upper - lower);
}

/** countLateEvents's counterpart. */
export async function lateEventsInClickHouse(ch: ClickHouse, scope: LateEventScope & Drained, metrics: readonly MetricSpec[]): Promise<LateEvents> {
  const windows = new Map<string, number>();
  for (const spec of metrics.flatMap((metric) => [metric, ...(metric.denominator ? [metric.denominator] : [])])) {
    windows.set(spec.event_key, Math.max(windows.get(spec.event_key) ?? 0, spec.window_ms));
  }
  if (windows.size === 0) return { total: 0, counted: 0, before_exposure: 0, outside_window: 0 };
  const params = new Params();
  const inWindow = [...windows]
    .map(([key, window]) => `(e.event_key = ${params.string(key)} AND e.occurred_at < x.exposed_at + ${params.int(window)})`)
    .join(' OR ');
  const stop = scope.eventsBefore === null ? '' : ` AND e.occurred_at < ${params.int(scope.eventsBefore)}`;
  // The late events are few: they are the hash table, and the live units are looked up in it.
  const query = `SELECT count() AS total, countIf(e.occurred_at < x.exposed_at) AS before_exposure,
      countIf(e.occurred_at >= x.exposed_at AND (${inWindow})${stop}) AS counted
    FROM (SELECT unit_id, exposed_at FROM exposures FINAL WHERE experiment_id = ${params.string(scope.experimentId)} AND superseded_at IS NULL) AS x
    INNER JOIN (SELECT unit_id, event_key, occurred_at FROM events
          WHERE workspace_id = ${params.string(scope.workspaceId)} AND late = 1 AND event_key IN ${params.strings([...windows.keys()])}
            AND drain_seq <= ${params.int(scope.drained)}) AS e
      ON x.unit_id = e.unit_id`;
  const [row] = await queryRows(ch, query, params);
  const total = toNumber(row?.total);
  const counted = toNumber(row?.counted);
  const beforeExposure = toNumber(row?.before_exposure);
  return { total, counted, before_exposure: beforeExposure, outside_window: total - counted - beforeExposure };
}

/** primaryPeriodTotals's rows: per (period, variant), units and the metric's n, s, q (period = last start at or before the exposure). */
export async function periodRowsInClickHouse(ch: ClickHouse, scope: UnitScope, spec: MetricSpec, starts: readonly number[]): Promise<Row[]> {
  const params = new Params();
  const later = starts
    .map((start, index) => ({ start, index }))
    .slice(1)
    .reverse()
    .map(({ start, index }) => `u.exposed_at >= ${params.int(start)}, ${index}`);
  const period = later.length === 0 ? '0' : `multiIf(${later.join(', ')}, 0)`;
  const columns = metricAggregates(params, spec, 0).join(', ');
  const query = `SELECT ${period} AS period, u.variant_key AS variant_key, count() AS units, ${columns}
    FROM (${unitValuesQuery(params, scope, [spec])}) AS u GROUP BY period, variant_key`;
  return queryRows(ch, query, params);
}

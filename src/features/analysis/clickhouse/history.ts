/**
 * A plan's history in ClickHouse (store/contract.ts, HistoryInput), the counterpart of sql/history-totals.ts:
 * the units seen in [from, to) (an exposure to an experiment of the environment, mirrored here
 * first, or an event of the workspace of a committed drain), each from the first time it was
 * seen, with the same per-unit values (sql.ts's unitValue) and exact sums (metricAggregates) as a
 * snapshot's.
 */
import { sql } from 'kysely';
import type { ClickHouse } from '../../../clickhouse/client.js';
import { committedDrain } from '../../../clickhouse/events.js';
import { queryRows } from './aggregate.js';
import type { ClickHouseStoreDeps } from './deps.js';
import { mirrorExposures } from './mirror.js';
import { metricAggregates, unitColumns, unitJoinKey, unitValue } from './sql.js';
import { Params } from './sql-parts.js';
import type { VariantTotals } from '../store/contract.js';
import { EMPTY_TOTALS, addVariantRow, toNumber } from '../store/fold.js';
import type { HistoryInput, HistoryTotals } from '../store/contract.js';
import { eventCountSpecs } from '../sql/history-totals.js';

/** The environment's experiments with an exposure in the period: their exposures are mirrored before the read. */
async function exposedExperiments(deps: ClickHouseStoreDeps, input: HistoryInput): Promise<string[]> {
  const result = await sql<{ id: string }>`SELECT DISTINCT ex.id AS id FROM experiments AS ex
    INNER JOIN exposures AS xp ON xp.experiment_id = ex.id
    WHERE ex.workspace_id = ${input.workspaceId} AND ex.environment_id = ${input.environmentId}
      AND xp.exposed_at >= ${input.from} AND xp.exposed_at < ${input.to}`.execute(deps.db);
  return result.rows.map((row) => row.id);
}

function unitsSeen(params: Params, input: HistoryInput, experiments: readonly string[], drained: number): string {
  const from = params.int(input.from);
  const to = params.int(input.to);
  const exposed = experiments.length
    ? `SELECT unit_id, exposed_at AS seen_at FROM exposures FINAL WHERE experiment_id IN ${params.strings(experiments)} AND exposed_at >= ${from} AND exposed_at < ${to} UNION ALL `
    : '';
  return `SELECT unit_id, min(seen_at) AS exposed_at FROM (${exposed}SELECT unit_id, occurred_at AS seen_at FROM events
      WHERE workspace_id = ${params.string(input.workspaceId)} AND occurred_at >= ${from} AND occurred_at < ${to} AND drain_seq <= ${params.int(drained)})
    GROUP BY unit_id`;
}

export async function historyInClickHouse(deps: ClickHouseStoreDeps, ch: ClickHouse, input: HistoryInput): Promise<HistoryTotals> {
  const experiments = await exposedExperiments(deps, input);
  for (const id of experiments) await mirrorExposures(deps, ch, id);
  const drained = await committedDrain(deps.db);
  const counts = input.metrics.map(eventCountSpecs);
  const all = [...input.metrics, ...counts.flat()];
  const params = new Params();
  if (all.length === 0) {
    const rows = await queryRows(ch, `SELECT count() AS units FROM (${unitsSeen(params, input, experiments, drained)})`, params);
    return { units: toNumber(rows[0]?.units), metrics: [], events: [] };
  }
  const columns = unitColumns(all);
  const keys = [...new Set(columns.map((column) => column.metric.event_key))];
  const values = columns.map((column) => `${unitValue(params, column.metric, column.period)} AS ${column.alias}`).join(', ');
  const events = `SELECT ${unitJoinKey.expression} AS h, unit_id, event_key, occurred_at, properties FROM events
      WHERE workspace_id = ${params.string(input.workspaceId)} AND event_key IN ${params.strings(keys)}
        AND drain_seq <= ${params.int(drained)} AND occurred_at < ${params.int(input.to)}`;
  const perUnit = `SELECT ${values} FROM (${events}) AS e
    RIGHT JOIN (SELECT ${unitJoinKey.expression} AS h, rowNumberInAllBlocks() AS row, * FROM (${unitsSeen(params, input, experiments, drained)})) AS x ON e.h = x.h
    GROUP BY x.row`;
  const aggregates = all.flatMap((metric, index) => metricAggregates(params, metric, index));
  const rows = await queryRows(ch, `SELECT 'history' AS variant_key, count() AS units, ${aggregates.join(', ')} FROM (${perUnit}) AS u`, params);
  const totals = new Map<string, VariantTotals>();
  for (const row of rows) if (toNumber(row.units) > 0) addVariantRow(totals, row, all.length);
  const group = totals.get('history');
  const metricTotals = group?.metrics ?? all.map(() => ({ ...EMPTY_TOTALS }));
  let next = input.metrics.length;
  const counted = counts.map((specs) => {
    const total = specs.reduce((sum, _, offset) => sum + toNumber(metricTotals[next + offset]?.sum), 0);
    next += specs.length;
    return total;
  });
  return { units: group?.units ?? 0, metrics: metricTotals.slice(0, input.metrics.length), events: counted };
}

/**
 * Funnel and retention metrics in ClickHouse: sql/sequences.ts's definitions and rows (variant_key,
 * step, n), written for ClickHouse (events of committed drains only, exposures from the mirror).
 * A funnel chains one join per step, each keeping per unit the earliest event after the previous
 * step's; retention joins the window's events to the units whose window has ended.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import type { SequenceCondition, SequenceInput, SequenceSpec, SequenceStepSpec, SequenceTotals } from '../store/sequence-contract.js';
import { foldSequenceRows } from '../sql/sequences.js';
import { queryRows, type Drained } from './aggregate.js';
import { jsonNumber, Params } from './sql-parts.js';
import { liveUnits } from './sql.js';

function equalsIn(params: Params, condition: SequenceCondition): string {
  const { keys, value } = condition;
  if (typeof value === 'number') return `${jsonNumber(params, keys)} = ${params.float(value)}`;
  const path = keys.map((key) => params.string(key)).join(', ');
  if (typeof value === 'boolean') return `(JSONType(e.properties, ${path}) = 'Bool' AND JSONExtractBool(e.properties, ${path}) = ${value ? 1 : 0})`;
  return `(JSONType(e.properties, ${path}) = 'String' AND JSONExtractString(e.properties, ${path}) = ${params.string(value)})`;
}

const COMPARE = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function conditionOf(params: Params, where: SequenceCondition | null): string {
  if (where === null) return '';
  if (where.op === 'eq') return ` AND ifNull(${equalsIn(params, where)}, 0)`;
  if (where.op === 'neq') return ` AND NOT ifNull(${equalsIn(params, where)}, 0)`;
  return ` AND ifNull(${jsonNumber(params, where.keys)} ${COMPARE[where.op]} ${params.float(where.value as number)}, 0)`;
}

/** The step's events of the workspace (committed drains, before the stop): unit_id and occurred_at. */
function stepEvents(params: Params, input: SequenceInput & Drained, step: SequenceStepSpec): string {
  const key = step.event_key === null ? '' : ` AND e.event_key = ${params.string(step.event_key)}`;
  const stop = input.eventsBefore === null ? '' : ` AND e.occurred_at < ${params.int(input.eventsBefore)}`;
  return `SELECT e.unit_id AS unit_id, e.occurred_at AS occurred_at FROM events AS e
    WHERE e.workspace_id = ${params.string(input.workspaceId)}${key} AND e.drain_seq <= ${params.int(input.drained)}${stop}${conditionOf(params, step.where)}`;
}

function funnelQuery(params: Params, input: SequenceInput & Drained, spec: SequenceSpec): string {
  const units = `SELECT unit_id, variant_key, exposed_at, exposed_at AS t FROM (${liveUnits(params, input.experimentId)})`;
  const window = params.int(spec.window_ms);
  const steps = spec.steps.map((step, index) => {
    const after = index === 0 ? '>=' : '>';
    return `, s${index + 1} AS (SELECT p.unit_id AS unit_id, any(p.variant_key) AS variant_key, any(p.exposed_at) AS exposed_at, min(e.occurred_at) AS t
      FROM (${stepEvents(params, input, step)}) AS e INNER JOIN s${index} AS p ON e.unit_id = p.unit_id
      WHERE e.occurred_at ${after} p.t AND e.occurred_at < p.exposed_at + ${window}
      GROUP BY p.unit_id)`;
  });
  const counts = spec.steps.map((_, index) => ` UNION ALL SELECT variant_key, ${index + 1} AS step, count() AS n FROM s${index + 1} GROUP BY variant_key`);
  return `WITH s0 AS (${units})${steps.join('')}
    SELECT variant_key, -1 AS step, count() AS n FROM s0 GROUP BY variant_key
    UNION ALL SELECT variant_key, 0 AS step, count() AS n FROM s0 GROUP BY variant_key${counts.join('')}`;
}

function retentionQuery(params: Params, input: SequenceInput & Drained, spec: SequenceSpec): string {
  const units = liveUnits(params, input.experimentId);
  const to = params.int(spec.window_ms);
  const ended = `(SELECT unit_id, variant_key, exposed_at FROM (${units}) WHERE exposed_at + ${to} <= ${params.int(input.asOf)})`;
  const converted = `SELECT x.unit_id AS unit_id, any(x.variant_key) AS variant_key
    FROM (${stepEvents(params, input, spec.steps[0] as SequenceStepSpec)}) AS e INNER JOIN ${ended} AS x ON e.unit_id = x.unit_id
    WHERE e.occurred_at >= x.exposed_at + ${params.int(spec.from_ms)} AND e.occurred_at < x.exposed_at + ${to}
    GROUP BY x.unit_id`;
  return `SELECT variant_key, -1 AS step, count() AS n FROM (${units}) GROUP BY variant_key
    UNION ALL SELECT variant_key, 0 AS step, count() AS n FROM ${ended} GROUP BY variant_key
    UNION ALL SELECT variant_key, 1 AS step, count() AS n FROM (${converted}) GROUP BY variant_key`;
}

export async function sequencesInClickHouse(ch: ClickHouse, input: SequenceInput & Drained): Promise<SequenceTotals> {
  const totals: SequenceTotals = new Map();
  for (const [index, spec] of input.metrics.entries()) {
    const params = new Params();
    const query = spec.kind === 'funnel' ? funnelQuery(params, input, spec) : retentionQuery(params, input, spec);
    foldSequenceRows(totals, await queryRows(ch, query, params), index, input.metrics);
  }
  return totals;
}

/**
 * The statements of an incremental refresh since a committed state (rollups.ts sinceState;
 * docs/analysis.md "Incremental analysis in ClickHouse"). What several statements need is written
 * once under the refresh's version and joined by the rest (ClickHouse migration 0007):
 * - rollup_new_events: the events of the current slots' keys drained since the state's watermark
 *   (up to the refresh's), the only read of new events in the events table;
 * - rollup_touched: the live units the refresh touches (changed, or with new events) and their
 *   exposure as of its version.
 * Each event key then takes one statement for all its metrics: the changed units rebuilt from all
 * their events, every other touched unit's committed sums plus its new events.
 */
import { DECIMAL_SCALE, jsonNumber, type Params } from './sql-parts.js';
import { changedUnits, newestRows, rollupUnitsAsOf, type RefreshScope } from './rollup-sql.js';
import type { RollupSlot } from '../store/contract.js';

const VALUE_COLUMNS = ['cnt', 'vsum', 'vcnt', 'pre_cnt', 'pre_vsum', 'pre_vcnt'] as const;
const zero = () => `toDecimal256(0, ${DECIMAL_SCALE})`;

/** A current slot and the generation its rows are in. */
export interface KeySlot {
  slot: RollupSlot;
  generation: number;
}

function ofRefresh(params: Params, scope: RefreshScope): string {
  return `experiment_id = ${params.string(scope.experimentId)} AND version = ${params.int(scope.version)}`;
}

/** Copies the events of `keys` drained after `after` up to the watermark (before the stop) into rollup_new_events. */
export function copyNewEvents(params: Params, scope: RefreshScope, keys: readonly string[], after: number): string {
  const stop = scope.stoppedAt === null ? '' : ` AND occurred_at < ${params.int(scope.stoppedAt)}`;
  return `INSERT INTO rollup_new_events (experiment_id, version, event_key, unit_id, occurred_at, properties)
    SELECT ${params.string(scope.experimentId)}, ${params.int(scope.version)}, event_key, unit_id, occurred_at, properties FROM events
    WHERE workspace_id = ${params.string(scope.workspaceId)} AND event_key IN ${params.strings(keys)}
      AND drain_seq > ${params.int(after)} AND drain_seq <= ${params.int(scope.watermark)}${stop}`;
}

/** The units the refresh may touch: the changed ones and (`fresh`) those with new events. */
export function candidateUnits(params: Params, scope: RefreshScope, fresh: boolean): string {
  const changed = changedUnits(params, scope);
  return fresh ? `${changed} UNION DISTINCT SELECT DISTINCT unit_id FROM rollup_new_events WHERE ${ofRefresh(params, scope)}` : changed;
}

/** Writes rollup_touched: the candidates live as of the refresh's version (its unit rows written), whether changed, and their exposure as of it. */
export function writeTouched(params: Params, scope: RefreshScope, unitsFrom: number, fresh: boolean): string {
  // As of the refresh's own version, above every row written: each unit's newest row (FINAL) is its row as of it.
  const live = rollupUnitsAsOf(params, scope.experimentId, params.int(scope.version), params.int(unitsFrom), candidateUnits(params, scope, fresh), true);
  return `INSERT INTO rollup_touched (experiment_id, version, unit_id, exposed_at, changed, variant_key, source_key_id, dimension_values)
    SELECT ${params.string(scope.experimentId)}, ${params.int(scope.version)}, unit_id, exposed_at, unit_id IN (${changedUnits(params, scope)}),
      variant_key, source_key_id, dimension_values FROM (${live})`;
}

function touched(params: Params, scope: RefreshScope, changed: boolean | null): string {
  const which = changed === null ? '' : ` AND changed = ${changed ? 1 : 0}`;
  return `SELECT unit_id FROM rollup_touched WHERE ${ofRefresh(params, scope)}${which}`;
}

/** One slot's six sums over the joined rows (e: events, x: the unit), as a tuple led by its metric id. */
function slotSums(params: Params, slot: RollupSlot): string {
  const inRange = `e.occurred_at >= x.exposed_at - ${params.int(slot.lookback_ms)} AND e.occurred_at < x.exposed_at + ${params.int(slot.window_ms)}`;
  const sums = (when: string) => {
    if (slot.value_keys === null) return `countIf(${when}), ${zero()}, toUInt64(0)`;
    const value = jsonNumber(params, slot.value_keys);
    return `countIf(${when}), sumIf(toDecimal256(ifNull(${value}, 0), ${DECIMAL_SCALE}), ${when} AND isNotNull(${value})), countIf(${when} AND isNotNull(${value}))`;
  };
  return `(${params.string(slot.metric_id)}, ${sums(`${inRange} AND e.occurred_at >= x.exposed_at`)}, ${sums(`${inRange} AND e.occurred_at < x.exposed_at`)})`;
}

/**
 * The events of `key` the refresh counts: all of the changed units' (up to the watermark, before
 * the stop), and the new ones of the others.
 */
function keyEvents(params: Params, scope: RefreshScope, key: string): string {
  const stop = scope.stoppedAt === null ? '' : ` AND occurred_at < ${params.int(scope.stoppedAt)}`;
  return `SELECT unit_id, occurred_at, properties FROM events
      WHERE workspace_id = ${params.string(scope.workspaceId)} AND event_key = ${params.string(key)} AND drain_seq <= ${params.int(scope.watermark)}
        AND unit_id IN (${touched(params, scope, true)})${stop}
    UNION ALL SELECT unit_id, occurred_at, properties FROM rollup_new_events
      WHERE ${ofRefresh(params, scope)} AND event_key = ${params.string(key)} AND unit_id IN (${touched(params, scope, false)})`;
}

/**
 * Writes the rows of every slot of one event key for every touched unit: a changed unit's from all
 * its events (zeros included, so that it replaces the unit's row), another's committed sums plus
 * those of its new events in the slot's window or lookback (exact: integers and Decimals). The
 * totals' fold-in then reads only the rows written at the refresh's version (RollupsAsOf.ownRows).
 */
export function refreshKeyRows(params: Params, scope: RefreshScope, key: string, slots: readonly KeySlot[], settled: boolean): string {
  const id = params.string(scope.experimentId);
  // The six sums of a tuple whose first sum is its element `first`.
  const picked = (tuple: string, first: number) => VALUE_COLUMNS.map((column, index) => `${tuple}.${index + first} AS ${column}`).join(', ');
  const delta = `SELECT unit_id, m.1 AS metric_id, ${picked('m', 2)} FROM (
      SELECT x.unit_id AS unit_id, [${slots.map(({ slot }) => slotSums(params, slot)).join(', ')}] AS ms
      FROM (${keyEvents(params, scope, key)}) AS e INNER JOIN (SELECT unit_id, exposed_at FROM rollup_touched WHERE ${ofRefresh(params, scope)}) AS x
        ON e.unit_id = x.unit_id
      GROUP BY x.unit_id) ARRAY JOIN ms AS m WHERE m.2 + m.5 > 0`;
  const generations = slots
    .map(({ slot, generation }) => `(metric_id = ${params.string(slot.metric_id)} AND generation = ${params.int(generation)})`)
    .join(' OR ');
  // `settled` (no rows of a refresh that never committed): no row of this key's slots is above the
  // committed version until this statement writes theirs, so each unit's newest row is its committed one.
  const where = `experiment_id = ${id} AND (${generations}) AND version <= ${params.int(scope.committed)}`;
  const old = settled
    ? newestRows('rollup_values', `metric_id, unit_id, ${VALUE_COLUMNS.join(', ')}`, touched(params, scope, false), where)
    : `SELECT metric_id, unit_id, ${picked('latest', 1)} FROM (
      SELECT metric_id, unit_id, argMax((${VALUE_COLUMNS.join(', ')}), version) AS latest FROM rollup_values
      WHERE ${where} AND unit_id IN (${touched(params, scope, false)}) GROUP BY metric_id, unit_id)`;
  const pairs = slots.map(({ slot, generation }) => `(${params.string(slot.metric_id)}, toUInt64(${params.int(generation)}))`).join(', ');
  const keyed = `SELECT unit_id, s.1 AS metric_id, s.2 AS generation FROM (
      SELECT unit_id, arrayJoin([${pairs}]) AS s FROM rollup_touched WHERE ${ofRefresh(params, scope)})`;
  const sums = VALUE_COLUMNS.map((column) => {
    const none = column.includes('vsum') ? zero() : '0';
    return `ifNull(o.${column}, ${none}) + ifNull(d.${column}, ${none})`;
  }).join(', ');
  return `INSERT INTO rollup_values (experiment_id, metric_id, generation, unit_id, version, ${VALUE_COLUMNS.join(', ')})
    SELECT ${id}, k.metric_id, k.generation, k.unit_id, ${params.int(scope.version)}, ${sums}
    FROM (${keyed}) AS k
      LEFT JOIN (${delta}) AS d ON d.unit_id = k.unit_id AND d.metric_id = k.metric_id
      LEFT JOIN (${old}) AS o ON o.unit_id = k.unit_id AND o.metric_id = k.metric_id`;
}

/**
 * The refresh's `computation` in one read: the events its rebuilt rows count (each slot built in
 * a new generation when `stale`, and the changed units'), the changed live units, and the new
 * events of the other live units with how many units they belong to.
 */
export function refreshCounts(params: Params, scope: RefreshScope, stale: boolean): string {
  const rebuilt = stale
    ? `generation = ${params.int(scope.version)} OR unit_id IN (${touched(params, scope, true)})`
    : `unit_id IN (${touched(params, scope, true)})`;
  const built = `SELECT sum(cnt + pre_cnt) FROM rollup_values WHERE experiment_id = ${params.string(scope.experimentId)}
    AND version = ${params.int(scope.version)} AND (${rebuilt})`;
  return `SELECT (${built}) AS built, (SELECT count() FROM rollup_touched WHERE ${ofRefresh(params, scope)} AND changed = 1) AS changed_units,
      count() AS events, uniqExact(unit_id) AS units
    FROM rollup_new_events WHERE ${ofRefresh(params, scope)} AND unit_id IN (${touched(params, scope, false)})`;
}

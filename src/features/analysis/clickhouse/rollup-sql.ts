/**
 * The SQL of the incremental analysis in ClickHouse (docs/analysis.md "Incremental analysis in
 * ClickHouse"; the refresh is rollups.ts). The tables (clickhouse/schema.ts):
 * - rollup_units: per experiment and unit, the live exposure the unit's rows were built for
 *   (exposure_id '' once the unit has none);
 * - rollup_values: per experiment, metric (slot), generation and unit, the counted events and the
 *   exact Decimal sum and count of their numbers, the same over the CUPED lookback;
 * - rollup_state: per refresh that committed, its version, the drain watermark it read up to, the
 *   version its units were built from, and each slot's generation and definition hash.
 * Every write carries the refresh's version; a read takes each key's newest row at or below the
 * committed version (argMax; FINAL where no row can be above it: RollupsAsOf.settled), so the rows
 * of a refresh killed before its commit are never read.
 * A slot's generation is the version that built it for every unit: rows of an older definition
 * (another generation) are never read either.
 */
import { DECIMAL_SCALE, jsonNumber, withoutEvents, type Params, type UnitColumn, type UnitScope } from './sql-parts.js';
import type { MetricSpec, RollupSlot } from '../store/contract.js';

/** A zero of the sums' type. */
const zero = () => `toDecimal256(0, ${DECIMAL_SCALE})`;
const VALUE_COLUMNS = 'cnt, vsum, vcnt, pre_cnt, pre_vsum, pre_vcnt';
const INSERT_VALUES = `INSERT INTO rollup_values (experiment_id, metric_id, generation, unit_id, version, ${VALUE_COLUMNS})`;

/** The version of the experiment's last committed refresh (0 without one). */
function committedVersion(params: Params, experimentId: string): string {
  return `(SELECT max(version) FROM rollup_state WHERE experiment_id = ${params.string(experimentId)})`;
}

/**
 * Each key's newest row of a rollup table (`columns`, `where`) when the read is settled
 * (RollupsAsOf.settled): FINAL merges the parts in key order instead of hashing every version of
 * every unit, and the units `only` selects are filtered before the merge (PREWHERE), which is
 * exact because unit_id is in the sorting key: it keeps every version of a unit or none. `where`
 * applies after FINAL, to each key's newest row.
 */
export function newestRows(table: string, columns: string, only: string | null, where: string): string {
  const units = only === null ? '' : ` PREWHERE unit_id IN (${only})`;
  return `SELECT ${columns} FROM ${table} FINAL${units} WHERE ${where}`;
}

/**
 * The live units of the rollups as of version `upTo`, from the rows written at or after `from` on
 * (of the units `only` selects): unit_id, exposure_id, variant_key, exposed_at. `settled`: no row
 * is above `upTo` (RollupsAsOf.settled).
 */
export function rollupUnitsAsOf(params: Params, experimentId: string, upTo: string, from: string, only: string | null = null, settled = false): string {
  const columns = 'exposure_id, variant_key, exposed_at, source_key_id, dimension_values';
  const where = `experiment_id = ${params.string(experimentId)} AND version <= ${upTo} AND version >= ${from}`;
  if (settled) return newestRows('rollup_units', `unit_id, ${columns}`, only, `${where} AND exposure_id != ''`);
  const units = only === null ? '' : ` AND unit_id IN (${only})`;
  return `SELECT unit_id, latest.1 AS exposure_id, latest.2 AS variant_key, latest.3 AS exposed_at, latest.4 AS source_key_id, latest.5 AS dimension_values FROM (
      SELECT unit_id, argMax((${columns}), version) AS latest FROM rollup_units WHERE ${where}${units} GROUP BY unit_id)
    WHERE exposure_id != ''`;
}

/**
 * Which rollups a read sees: a version, the version its units were built from, and each slot's
 * generation (a query of (metric_id, generation) pairs). The committed ones by default; a refresh
 * reads its own before it commits (the totals it maintains: totals.ts).
 */
export interface RollupsAsOf {
  version: string;
  unitsFrom: string;
  generations: string;
  /**
   * Only the units a refresh touched (rollup_touched) and the rows it wrote for them at `version`
   * (refresh-sql.ts writes one per touched unit and slot): its totals' fold-in reads no older row.
   */
  ownRows?: boolean;
  /**
   * No row above `version` exists (a refresh that found no rows of one that never committed reads
   * before it writes above `version`, or reads as of its own version, above every row written):
   * each key's newest row is its row as of `version`, read by FINAL (newestRows). With rows above
   * `version` FINAL would pick those and the version filter would then drop the key, so reads
   * that cannot rule them out (a snapshot's, a refresh's after a killed one) take argMax over the
   * versions at or below it.
   */
  settled?: boolean;
}

function committedAsOf(params: Params, experimentId: string): RollupsAsOf {
  const id = params.string(experimentId);
  return {
    version: committedVersion(params, experimentId),
    unitsFrom: `(SELECT argMax(units_from, version) FROM rollup_state WHERE experiment_id = ${id})`,
    generations: `(SELECT pair.1, pair.2 FROM (SELECT arrayJoin(pairs) AS pair FROM (
      SELECT arrayZip(argMax(slot_ids, version), argMax(slot_generations, version)) AS pairs FROM rollup_state WHERE experiment_id = ${id})))`,
  };
}

/** The rollups as a refresh at `version` leaves them, with these slot generations. */
export function rollupsAt(params: Params, version: number, unitsFrom: number, generations: ReadonlyMap<string, number>): RollupsAsOf {
  const pairs = [...generations].map(([metricId, generation]) => `SELECT ${params.string(metricId)}, toUInt64(${params.int(generation)})`);
  return {
    version: params.int(version),
    unitsFrom: params.int(unitsFrom),
    generations: `(${pairs.length > 0 ? pairs.join(' UNION ALL ') : "SELECT '', toUInt64(0)"})`,
  };
}

/** The rows a refresh wrote at `asOf.version` for the metrics' slots (RollupsAsOf.ownRows), one per slot and touched unit. */
function ownValueRows(params: Params, experimentId: string, metricIds: readonly string[], asOf: RollupsAsOf): string {
  return `SELECT metric_id, unit_id, ${VALUE_COLUMNS} FROM rollup_values
    WHERE experiment_id = ${params.string(experimentId)} AND metric_id IN ${params.strings(metricIds)} AND (metric_id, generation) IN ${asOf.generations}
      AND version = ${asOf.version}`;
}

/** The live units a refresh touched, as of its version (RollupsAsOf.ownRows). */
function touchedUnits(params: Params, experimentId: string, asOf: RollupsAsOf): string {
  return `SELECT unit_id, variant_key, exposed_at, source_key_id, dimension_values FROM rollup_touched
    WHERE experiment_id = ${params.string(experimentId)} AND version = ${asOf.version}`;
}

/** The rows of the metrics' slots as of `asOf` (each slot's generation there), one per slot and unit (of the units `only` selects). */
function valueRowsAsOf(params: Params, experimentId: string, metricIds: readonly string[], asOf: RollupsAsOf, only: string | null): string {
  const id = params.string(experimentId);
  const where = `experiment_id = ${id} AND metric_id IN ${params.strings(metricIds)} AND (metric_id, generation) IN ${asOf.generations}
        AND version <= ${asOf.version}`;
  if (asOf.settled) return newestRows('rollup_values', `metric_id, unit_id, ${VALUE_COLUMNS}`, only, where);
  const units = only === null ? '' : ` AND unit_id IN (${only})`;
  return `SELECT metric_id, unit_id, ${latestColumns()} FROM (
      SELECT metric_id, unit_id, argMax((${VALUE_COLUMNS}), version) AS latest FROM rollup_values WHERE ${where}${units}
      GROUP BY metric_id, unit_id)`;
}

function latestColumns(): string {
  return VALUE_COLUMNS.split(', ')
    .map((column, index) => `latest.${index + 1} AS ${column}`)
    .join(', ');
}

function metricIdOf(metric: MetricSpec): string {
  if (!metric.metric_id) throw new Error('a metric analysed from rollups needs its metric_id');
  return metric.metric_id;
}

/** A unit's value of one metric from its slot's row among `r` (grouped per unit), as unitValue gives it from raw events. */
function rollupValue(params: Params, column: UnitColumn): string {
  const slot = params.string(metricIdOf(column.metric));
  const [cnt, vsum, vcnt] = column.period === 'window' ? ['cnt', 'vsum', 'vcnt'] : ['pre_cnt', 'pre_vsum', 'pre_vcnt'];
  const pick = (name: string) => `sumIf(r.${name}, r.metric_id = ${slot})`;
  const metric = column.metric;
  if (metric.kind === 'binary') return `toFloat64(${pick(cnt)} > 0)`;
  if (metric.aggregation === 'count' || metric.value_keys === null) return `toFloat64(${pick(cnt)})`;
  const sum = `toFloat64(${pick(vsum)})`;
  const numbers = pick(vcnt);
  return metric.aggregation === 'sum' ? `if(${numbers} > 0, ${sum}, NULL)` : `if(${numbers} > 0, ${sum} / ${numbers}, NULL)`;
}

/**
 * unitValuesQuery from the rollups: one row per live unit of the last committed refresh, with the
 * same value columns (`ev` is 0: no raw event is read), and `extra` columns read from the mirrored
 * exposure the unit's rows were built for (breakdowns).
 */
export function rollupUnitValuesQuery(
  params: Params,
  scope: Pick<UnitScope, 'experimentId'>,
  columns: readonly UnitColumn[],
  extra: string,
  asOf: RollupsAsOf = committedAsOf(params, scope.experimentId),
  only: string | null = null,
): string {
  const id = scope.experimentId;
  const live = asOf.ownRows ? touchedUnits(params, id, asOf) : rollupUnitsAsOf(params, id, asOf.version, asOf.unitsFrom, only, asOf.settled);
  const units = `SELECT unit_id, variant_key, exposed_at${extra} FROM (${live})`;
  if (columns.length === 0) return `SELECT x.*, toUInt64(0) AS ev FROM (${units}) AS x`;
  const slots = [...new Set(columns.map((column) => metricIdOf(column.metric)))];
  const values = columns.map((column) => `${rollupValue(params, column)} AS ${column.alias}`).join(', ');
  const perUnit = `SELECT r.unit_id AS unit_id, ${values} FROM (${asOf.ownRows ? ownValueRows(params, id, slots, asOf) : valueRowsAsOf(params, id, slots, asOf, only)}) AS r GROUP BY r.unit_id`;
  const selected = columns.map((column) => `${withoutEvents(column.metric, `a.${column.alias}`)} AS ${column.alias}`).join(', ');
  return `SELECT x.*, ${selected}, toUInt64(0) AS ev FROM (${units}) AS x LEFT JOIN (${perUnit}) AS a ON a.unit_id = x.unit_id`;
}

/** What one refresh writes with and reads up to. */
export interface RefreshScope {
  workspaceId: string;
  experimentId: string;
  /** The stop: events at or after it count in no slot. */
  stoppedAt: number | null;
  /** This refresh's version, above every version written before. */
  version: number;
  /** The version of the last committed refresh (0 without one). */
  committed: number;
  /** The drain watermark this refresh reads up to (the committed drain sequence). */
  watermark: number;
  /**
   * Mirrored exposure rows at or below this version were compared with the rollups by an earlier
   * refresh (0: compare every unit): only units with newer rows can have changed (mirror.ts
   * writes every row of a changed unit again, with a newer version).
   */
  mirrorSeen: number;
}

/** The experiment's live exposures in the mirror (of the units `only` selects): unit_id, id, variant_key, exposed_at and its breakdown values. */
function mirroredLive(params: Params, experimentId: string, only: string | null = null): string {
  const units = only === null ? '' : ` AND unit_id IN (${only})`;
  return `SELECT unit_id, id, variant_key, exposed_at, source_key_id, dimension_values FROM exposures FINAL
    WHERE experiment_id = ${params.string(experimentId)} AND superseded_at IS NULL${units}`;
}

/** The units with mirrored rows newer than the scope's mirrorSeen, or null for every unit. */
function mirroredSince(params: Params, scope: RefreshScope): string | null {
  if (scope.mirrorSeen <= 0) return null;
  return `SELECT DISTINCT unit_id FROM exposures WHERE experiment_id = ${params.string(scope.experimentId)} AND version > ${params.int(scope.mirrorSeen)}`;
}

/** The units this refresh lists as changed (rollup_changed at its version). */
export function changedUnits(params: Params, scope: RefreshScope): string {
  return `SELECT unit_id FROM rollup_changed WHERE experiment_id = ${params.string(scope.experimentId)} AND version = ${params.int(scope.version)}`;
}

/**
 * Lists the units whose rows are rebuilt: those whose live exposure in the mirror is not the one
 * their rows were built for (new, superseded, re-assigned), and those with rows of a refresh that
 * never committed (version above the committed one), whatever those rows say (`leftovers`: the
 * refresh found such rows).
 */
export function listChangedUnits(params: Params, scope: RefreshScope, unitsFrom: number, leftovers: boolean): string {
  const id = params.string(scope.experimentId);
  const committed = params.int(scope.committed);
  const since = mirroredSince(params, scope);
  // Read before this refresh writes any unit row: without leftovers no row is above the committed version.
  const before = rollupUnitsAsOf(params, scope.experimentId, committed, params.int(unitsFrom), since, !leftovers);
  return `INSERT INTO rollup_changed (experiment_id, version, unit_id)
    SELECT ${id}, ${params.int(scope.version)}, unit_id FROM (
      SELECT coalesce(m.unit_id, r.unit_id) AS unit_id FROM (${mirroredLive(params, scope.experimentId, since)}) AS m
        FULL OUTER JOIN (${before}) AS r ON m.unit_id = r.unit_id
      WHERE ifNull(m.id, '') != ifNull(r.exposure_id, '')${
        leftovers
          ? `
      UNION DISTINCT SELECT unit_id FROM rollup_units WHERE experiment_id = ${id} AND version > ${committed}
      UNION DISTINCT SELECT unit_id FROM rollup_values WHERE experiment_id = ${id} AND version > ${committed}`
          : ''
      })`;
}

/** Writes the units rows of this refresh: every live unit of the mirror (`changedOnly` false), or the changed ones (gone ones with exposure_id ''). */
export function writeUnits(params: Params, scope: RefreshScope, changedOnly: boolean): string {
  const head = `INSERT INTO rollup_units (experiment_id, unit_id, version, exposure_id, variant_key, exposed_at, source_key_id, dimension_values)`;
  const id = params.string(scope.experimentId);
  const version = params.int(scope.version);
  if (!changedOnly)
    return `${head} SELECT ${id}, unit_id, ${version}, id, variant_key, exposed_at, source_key_id, dimension_values FROM (${mirroredLive(params, scope.experimentId)})`;
  return `${head} SELECT ${id}, c.unit_id, ${version}, ifNull(m.id, ''), ifNull(m.variant_key, ''), ifNull(m.exposed_at, 0), m.source_key_id, m.dimension_values
    FROM (${changedUnits(params, scope)}) AS c LEFT JOIN (${mirroredLive(params, scope.experimentId, changedUnits(params, scope))}) AS m ON m.unit_id = c.unit_id`;
}

/**
 * The drained events of `keys` up to the watermark; with `after`, only those drained after it. No
 * committed event is stored twice (clickhouse/events.ts), so rows are read as the full computation
 * reads them, without looking for copies. Not filtered by unit: the builds join them to every live
 * unit, and a `unit_id IN (live units)` filter as well cost a set of every unit's id on top of the
 * join (at 4M units, 17 s more and past the embedded engine's 2 GB bound).
 */
export function eventRows(params: Params, scope: RefreshScope, keys: readonly string[], after: number | null): string {
  const since = after === null ? '' : `drain_seq > ${params.int(after)} AND `;
  const stop = scope.stoppedAt === null ? '' : ` AND occurred_at < ${params.int(scope.stoppedAt)}`;
  return `SELECT unit_id, event_key, occurred_at, properties FROM events
    WHERE workspace_id = ${params.string(scope.workspaceId)} AND event_key IN ${params.strings(keys)}
      AND ${since}drain_seq <= ${params.int(scope.watermark)}${stop}`;
}

/** One slot's six sums per unit of `units` (unit_id, exposed_at) over the events `events` in its window and lookback. */
function slotRows(params: Params, slot: RollupSlot, events: string, units: string): string {
  const window = params.int(slot.window_ms);
  const lookback = params.int(slot.lookback_ms);
  const inWindow = `e.occurred_at >= x.exposed_at`;
  const numbers = (when: string) => {
    if (slot.value_keys === null) return `${zero()}, toUInt64(0)`;
    const value = jsonNumber(params, slot.value_keys);
    return `sumIf(toDecimal256(ifNull(${value}, 0), ${DECIMAL_SCALE}), ${when} AND isNotNull(${value})), countIf(${when} AND isNotNull(${value}))`;
  };
  const sums = `countIf(${inWindow}), ${numbers(inWindow)}, countIf(NOT (${inWindow})), ${numbers(`NOT (${inWindow})`)}`;
  return `SELECT unit_id, s.1 AS cnt, s.2 AS vsum, s.3 AS vcnt, s.4 AS pre_cnt, s.5 AS pre_vsum, s.6 AS pre_vcnt FROM (
      SELECT x.unit_id AS unit_id, (${sums}) AS s FROM (${events}) AS e INNER JOIN (${units}) AS x ON e.unit_id = x.unit_id
      WHERE e.event_key = ${params.string(slot.event_key)} AND e.occurred_at >= x.exposed_at - ${lookback} AND e.occurred_at < x.exposed_at + ${window}
      GROUP BY x.unit_id)`;
}

/**
 * Builds a slot's rows at `generation` for the units `units` selects, from all their events up to
 * the watermark: a row for each unit with an event in the slot's window or lookback.
 */
export function buildSlotRows(params: Params, scope: RefreshScope, slot: RollupSlot, generation: number, units: string): string {
  const head = `${INSERT_VALUES} SELECT ${params.string(scope.experimentId)}, ${params.string(slot.metric_id)}, ${params.int(generation)}`;
  const rows = slotRows(params, slot, eventRows(params, scope, [slot.event_key], null), units);
  return `${head}, a.unit_id, ${params.int(scope.version)}, ${VALUE_COLUMNS} FROM (${rows}) AS a`;
}

/** The events this refresh's builds read: those its rebuilt rows count (each slot's generation built now, and the changed units'). */
export function countBuiltEvents(params: Params, scope: RefreshScope): string {
  return `SELECT sum(cnt + pre_cnt) AS events FROM rollup_values WHERE experiment_id = ${params.string(scope.experimentId)}
    AND version = ${params.int(scope.version)} AND (generation = ${params.int(scope.version)} OR unit_id IN (${changedUnits(params, scope)}))`;
}

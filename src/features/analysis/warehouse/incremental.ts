/**
 * Incremental refreshes of metrics on fact tables (docs/warehouse.md "Incremental refresh"). Each
 * unit's counts and sums of rows older than a cutoff are kept in Verdict (unit-state-store.ts); a
 * refresh reads from the source only the rows from the previous cutoff on (the restatement window,
 * so rows that arrived late but are timestamped inside it count), settles those before the new
 * cutoff (now minus the fact table's restatement_hours) into the state, and counts the newer ones
 * this time only: no row is counted twice. A unit exposed (or re-exposed) since the state was kept
 * is read in full. A full refresh reads every row and replaces the state.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../../db/database.js';
import type { Clock } from '../../../lib/time.js';
import type { OpenedFactTable, SourceSession } from '../../data-sources/read.js';
import type { ComputationMode, VariantTotals } from '../store/contract.js';
import { toNumber } from '../store/fold.js';
import { checkFilters, dialectOf, rowsWithExposures } from './aggregate.js';
import type { ShippedExposure, WarehouseMetricSpec } from './spec.js';
import { literal } from './statement.js';
import { loadState, saveState, type StateScope, type StoredState, type StoredUnit } from './unit-state-store.js';
import { unitStatement, type UnitPeriod, type UnitReadBounds } from './unit-statement.js';
import { addPart, emptyParts, percentileOfUnits, variantTotalsOf, type PeriodName, type UnitParts } from './unit-values.js';

const HOUR_MS = 3_600_000;

/** What the snapshot's computation.warehouse reports of the refreshes of its metrics on fact tables. */
export interface WarehouseRefreshReport {
  mode: ComputationMode;
  /** Fact rows the statements read inside a unit's periods, summed over the distinct states read. */
  rows_read: number;
  /** Units whose whole history was read: new or re-exposed units, every unit on a full refresh. */
  units_read_in_full: number;
  /** Units read only from the previous cutoff on. */
  units_read_from_cutoff: number;
  /** The earliest previous cutoff an incremental read started from (epoch ms), or null. */
  read_from: number | null;
  /** The latest cutoff below which the units' rows are now kept (epoch ms), or null. */
  settled_before: number | null;
}

export interface UnitRefresher {
  report: WarehouseRefreshReport;
  totals(table: OpenedFactTable, session: SourceSession, spec: WarehouseMetricSpec, eventsBefore: number | null): Promise<Map<string, VariantTotals>>;
  percentile(table: OpenedFactTable, session: SourceSession, spec: WarehouseMetricSpec, eventsBefore: number | null, quantile: number): Promise<number | null>;
}

interface Named {
  name: PeriodName;
  period: UnitPeriod;
}

function periodsOf(spec: WarehouseMetricSpec): Named[] {
  const window = (item: WarehouseMetricSpec): UnitPeriod => ({ fact: item.fact, from: 'x.exposed_at', to: `x.exposed_at + ${literal(item.window_ms)}` });
  const periods: Named[] = [{ name: 'm', period: window(spec) }];
  if (spec.denominator) periods.push({ name: 'd', period: window(spec.denominator) });
  if (spec.lookback_ms) periods.push({ name: 'p', period: { fact: spec.fact, from: `x.exposed_at - ${literal(spec.lookback_ms)}`, to: 'x.exposed_at' } });
  return periods;
}

/** Everything that decides which rows a unit's state holds: a change starts a new state (read in full). */
function stateKeyOf(spec: WarehouseMetricSpec, eventsBefore: number | null): string {
  const of = (item: WarehouseMetricSpec | undefined) => (item ? { fact: item.fact, window_ms: item.window_ms } : null);
  const definition = { m: of(spec), d: of(spec.denominator), lookback_ms: spec.lookback_ms ?? null, stop: eventsBefore };
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex').slice(0, 32);
}

interface ReadPlan {
  known: ShippedExposure[];
  fresh: ShippedExposure[];
  stored: StoredState | null;
}

function planRead(exposures: readonly ShippedExposure[], stored: StoredState | null): ReadPlan {
  const known: ShippedExposure[] = [];
  const fresh: ShippedExposure[] = [];
  for (const exposure of exposures) (stored?.units.get(exposure.unit_id)?.exposed_at === exposure.exposed_at ? known : fresh).push(exposure);
  return { known, fresh, stored };
}

type Row = Record<string, unknown>;

/** Folds the statement's rows: settled parts into `settled` (per unit), fresh ones into `current`; answers the rows read. */
function foldRows(rows: readonly Row[], names: readonly PeriodName[], settled: Map<string, UnitParts>, current: Map<string, UnitParts>): number {
  let read = 0;
  for (const row of rows) {
    const unit = String(row.unit_id);
    const name = names[toNumber(row.period)] as PeriodName;
    const old = { c: toNumber(row.oc), cv: toNumber(row.ocv), s: toNumber(row.os) };
    const fresh = { c: toNumber(row.fc), cv: toNumber(row.fcv), s: toNumber(row.fs) };
    read += old.c + fresh.c;
    if (old.c > 0) addPart((settled.get(unit) ?? settled.set(unit, emptyParts()).get(unit) ?? emptyParts())[name], old);
    if (fresh.c > 0) addPart((current.get(unit) ?? current.set(unit, emptyParts()).get(unit) ?? emptyParts())[name], fresh);
  }
  return read;
}

const cloneParts = (parts: UnitParts): UnitParts => ({ m: { ...parts.m }, d: { ...parts.d }, p: { ...parts.p } });

/**
 * Each exposed unit's new kept state (what it had, if its exposure is unchanged, plus the rows now
 * settled) and its counts this time (that plus the newer rows); `upserts` holds the states that changed.
 */
function combine(
  shipped: readonly ShippedExposure[],
  stored: StoredState | null,
  read: { settled: Map<string, UnitParts>; current: Map<string, UnitParts> },
  names: readonly PeriodName[],
) {
  const upserts = new Map<string, StoredUnit>();
  const units = new Map<string, UnitParts>();
  for (const exposure of shipped) {
    const kept = stored?.units.get(exposure.unit_id);
    const isKnown = kept !== undefined && kept.exposed_at === exposure.exposed_at;
    const settled = isKnown ? cloneParts(kept.parts) : emptyParts();
    const delta = read.settled.get(exposure.unit_id);
    if (delta) for (const name of names) addPart(settled[name], delta[name]);
    if (!isKnown || delta) upserts.set(exposure.unit_id, { exposed_at: exposure.exposed_at, parts: cloneParts(settled) });
    const fresh = read.current.get(exposure.unit_id);
    if (fresh) for (const name of names) addPart(settled[name], fresh[name]);
    units.set(exposure.unit_id, settled);
  }
  return { units, upserts };
}

export function unitRefresher(
  deps: { db: Db; clock: Clock },
  scope: { workspaceId: string; experimentId: string },
  mode: ComputationMode,
  exposures: () => Promise<ShippedExposure[]>,
): UnitRefresher {
  const report: WarehouseRefreshReport = { mode, rows_read: 0, units_read_in_full: 0, units_read_from_cutoff: 0, read_from: null, settled_before: null };
  const cache = new Map<string, Promise<Map<string, UnitParts>>>();
  const byWindow = new Map<string, Promise<Map<string, UnitParts>>>();

  async function refresh(table: OpenedFactTable, session: SourceSession, spec: WarehouseMetricSpec, eventsBefore: number | null, key: string) {
    checkFilters(table.kind, spec);
    const stateScope: StateScope = { ...scope, stateKey: key };
    const shipped = await exposures();
    const plan = planRead(shipped, mode === 'full' ? null : await loadState(deps.db, stateScope));
    const readFrom = plan.stored?.settledBefore ?? null;
    const now = deps.clock.now();
    // Never below the kept cutoff: rows under it are in the state already (a restatement window
    // made longer reaches back only from the next full refresh).
    const settleBefore = Math.max(now - table.restatement_hours * HOUR_MS, readFrom ?? Number.NEGATIVE_INFINITY);
    const named = periodsOf(spec);
    const names = named.map((item) => item.name);
    const periods = named.map((item) => item.period);
    const settledDelta = new Map<string, UnitParts>();
    const current = new Map<string, UnitParts>();
    const read = async (group: ShippedExposure[], bounds: UnitReadBounds) => {
      if (group.length === 0) return;
      const rows = await rowsWithExposures(table.kind, session, group, unitStatement(dialectOf(table.kind), periods, bounds));
      report.rows_read += foldRows(rows, names, settledDelta, current);
    };
    await read(plan.known, { stop: eventsBefore, settleBefore, readFrom });
    await read(plan.fresh, { stop: eventsBefore, settleBefore, readFrom: null });
    const { units, upserts } = combine(shipped, plan.stored, { settled: settledDelta, current }, names);
    const live = new Set(shipped.map((exposure) => exposure.unit_id));
    const removed = plan.stored ? [...plan.stored.units.keys()].filter((unit) => !live.has(unit)) : [];
    await saveState(deps.db, stateScope, { readFrom, settledBefore: settleBefore, replace: plan.stored === null, upserts, removed, refreshedAt: now });
    // Every state reads the same exposures: the units, not their sum over the states.
    report.units_read_in_full = Math.max(report.units_read_in_full, plan.fresh.length);
    report.units_read_from_cutoff = Math.max(report.units_read_from_cutoff, plan.known.length);
    if (readFrom !== null && plan.known.length > 0) report.read_from = Math.min(report.read_from ?? readFrom, readFrom);
    report.settled_before = Math.max(report.settled_before ?? settleBefore, settleBefore);
    return units;
  }

  /**
   * Each state is refreshed once per snapshot, whichever metrics read it; a percentile cap, which
   * needs only the window, reads any state refreshed for the same window (the metric's, CUPED's).
   */
  function unitsOf(table: OpenedFactTable, session: SourceSession, spec: WarehouseMetricSpec, eventsBefore: number | null, windowOnly = false) {
    const windowKey = stateKeyOf({ ...spec, denominator: undefined, lookback_ms: null }, eventsBefore);
    const key = stateKeyOf(spec, eventsBefore);
    const found = (windowOnly ? byWindow.get(windowKey) : undefined) ?? cache.get(key) ?? refresh(table, session, spec, eventsBefore, key);
    cache.set(key, found);
    if (!spec.denominator) byWindow.set(windowKey, found);
    return found;
  }

  return {
    report,
    async totals(table, session, spec, eventsBefore) {
      const units = await unitsOf(table, session, spec, eventsBefore);
      return variantTotalsOf(await exposures(), units, spec);
    },
    async percentile(table, session, spec, eventsBefore, quantile) {
      const units = await unitsOf(table, session, spec, eventsBefore, true);
      return percentileOfUnits(await exposures(), units, spec, quantile);
    },
  };
}

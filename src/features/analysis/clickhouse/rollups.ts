/**
 * The incremental refresh in ClickHouse (docs/analysis.md "Incremental analysis in ClickHouse"),
 * sql/rollup/refresh.ts's counterpart behind the same seam (store/contract.ts): a snapshot then
 * reads the totals the refresh kept (totals.ts), and a metric with a percentile cap is aggregated
 * from every unit's rollups by the same per-variant SQL as the full computation (rollup-sql.ts
 * gives the per-unit values). A refresh:
 * 1. takes the snapshot's watermark: the primary database's committed drain sequence
 *    (clickhouse/events.ts), read once per snapshot, so every event numbered at or below it is in
 *    ClickHouse in full and every read of the snapshot sees the same events;
 * 2. without a committed state (the first refresh, `--rebuild`, a watermark behind the state's):
 *    writes every live unit of the mirrored exposures and builds every slot from raw events;
 * 3. otherwise lists the changed units (among those mirrored since the last refresh: exposure
 *    changed; or rows of a refresh that never committed) and rebuilds them from all their events;
 *    adds to the rows of every other unit with events drained since the last watermark (late ones
 *    included) those events; builds a slot whose definition hash changed (metric edit, CUPED, the
 *    stop) for every unit in a new generation;
 * 4. commits by inserting its rollup_state row (one row: atomic), the totals in it. Everything it
 *    wrote carries its version, above the committed one, and is read only once that row exists: a
 *    refresh killed at any point leaves the rollups as the last committed one left them, and the
 *    next one rebuilds the units the killed one touched.
 * Two refreshes of one experiment never run at once: one at a time per process, and on PostgreSQL
 * a session advisory lock per experiment across processes.
 */
import { sql } from 'kysely';
import type { ClickHouse } from '../../../clickhouse/client.js';
import type { ExperimentRow } from '../../experiments/read.js';
import { keepTotals, type KeptTotals } from './totals.js';
import { loadState, type State } from './rollup-state.js';
import { buildSlotRows, countBuiltEvents, listChangedUnits, rollupUnitsAsOf, writeUnits, type RefreshScope } from './rollup-sql.js';
import { copyNewEvents, refreshCounts, refreshKeyRows, writeTouched, type KeySlot } from './refresh-sql.js';
import { Params } from './sql-parts.js';
import { queryRows } from './aggregate.js';
import type { ClickHouseStoreDeps } from './deps.js';
import type { RefreshResult, RollupSlot, TotalsPlan } from '../store/contract.js';
import { slotHash, toNumber } from '../store/fold.js';

/**
 * How far below the last refresh's newest mirrored version the next one still compares units: a
 * mirror of another process that read the clock earlier may insert rows with a slightly older
 * version after that refresh read it (versions are milliseconds of the clock).
 */
const MIRROR_MARGIN = 10 * 60_000;

/**
 * The most mirrored rows a refresh compares through a set of their units (`unit_id IN (...)`,
 * rollup-sql.ts listChangedUnits). ClickHouse builds such a set in memory and never spills it: the
 * first refresh after a build of 20M units, whose mirror rows all fell within the margin, asked for
 * 2.3 GB and failed under the embedded engine's 2 GB bound. Past this many rows the refresh compares
 * every unit instead, through joins that spill; either way a unit is listed exactly when its live
 * exposure changed.
 */
const MAX_COMPARED_BY_SET = 1_000_000;

/** What a refresh reads before it writes, in one statement. */
interface Prelude {
  /** A version above every one written for the experiment, committed or not (and, when the clock allows, the time). */
  version: number;
  /** The newest version of the experiment's mirrored exposure rows (0 without any). */
  mirrored: number;
  /** Whether rollup rows above the committed version may exist (a refresh began and never committed). */
  leftovers: boolean;
  /** How many mirrored rows are newer than `mirrorSeen` (the rows the refresh compares). */
  mirroredSince: number;
}

/**
 * Reads the prelude and records the refresh as begun (rollup_begun) before it writes anything: the
 * newest begun version is then above every rollup row, and above the committed one exactly when
 * rows of a refresh that never committed may exist (one that died after its begun row, whether
 * or not it wrote).
 */
async function prelude(ch: ClickHouse, experimentId: string, seen: { committed: number; mirrorSeen: number }, now: number): Promise<Prelude> {
  const params = new Params();
  const id = params.string(experimentId);
  const newest = (table: string) => `(SELECT max(version) FROM ${table} WHERE experiment_id = ${id})`;
  const since = `(SELECT count() FROM exposures WHERE experiment_id = ${id} AND version > ${params.int(seen.mirrorSeen)})`;
  const row = await firstRow(
    ch,
    () => `SELECT ${newest('rollup_state')} AS state, ${newest('rollup_begun')} AS begun, ${newest('exposures')} AS mirrored, ${since} AS since`,
    params,
  );
  const begun = toNumber(row.begun);
  const version = Math.max(now, toNumber(row.state) + 1, begun + 1);
  await ch.client.insert({ table: 'rollup_begun', values: [{ experiment_id: experimentId, version }], format: 'JSONEachRow' });
  return { version, mirrored: toNumber(row.mirrored), leftovers: begun > seen.committed, mirroredSince: toNumber(row.since) };
}

async function run(ch: ClickHouse, build: (params: Params) => string): Promise<void> {
  const params = new Params();
  await ch.client.command({ query: build(params), query_params: params.values });
}

async function firstRow(ch: ClickHouse, build: (params: Params) => string, params = new Params()): Promise<Record<string, unknown>> {
  return (await queryRows(ch, build(params), params))[0] ?? {};
}

/** The live units as of this refresh's version (its unit rows written; no row is above it, so FINAL reads them). */
function unitsNow(params: Params, scope: RefreshScope, unitsFrom: number): string {
  return rollupUnitsAsOf(params, scope.experimentId, params.int(scope.version), params.int(unitsFrom), null, true);
}

async function countUnits(ch: ClickHouse, scope: RefreshScope, unitsFrom: number): Promise<number> {
  return toNumber((await firstRow(ch, (params) => `SELECT count() AS units FROM (${unitsNow(params, scope, unitsFrom)})`)).units);
}

/** Every live unit and every slot, from raw events (generation: this version). */
async function fromScratch(ch: ClickHouse, scope: RefreshScope, slots: readonly RollupSlot[]): Promise<RefreshResult> {
  await run(ch, (params) => writeUnits(params, scope, false));
  for (const slot of slots) await run(ch, (params) => buildSlotRows(params, scope, slot, scope.version, unitsNow(params, scope, scope.version)));
  const built = await firstRow(ch, (params) => countBuiltEvents(params, scope));
  return { events_read: toNumber(built.events), units_refreshed: await countUnits(ch, scope, scope.version) };
}

/** The slots whose rows are current (of the committed definition) grouped by event key, and the generation of every slot. */
function sortSlots(scope: RefreshScope, slots: readonly RollupSlot[], state: State) {
  const generations = new Map<string, number>();
  const byKey = new Map<string, KeySlot[]>();
  const stale: RollupSlot[] = [];
  for (const slot of slots) {
    const known = state.slots.get(slot.metric_id);
    if (known && known.hash === slotHash(slot, scope.stoppedAt)) {
      generations.set(slot.metric_id, known.generation);
      byKey.set(slot.event_key, [...(byKey.get(slot.event_key) ?? []), { slot, generation: known.generation }]);
    } else {
      generations.set(slot.metric_id, scope.version);
      stale.push(slot);
    }
  }
  return { generations, byKey, stale };
}

/**
 * What changed since the committed state: changed units rebuilt, new events added (one statement
 * per event key, refresh-sql.ts), slots of another definition built anew.
 */
async function sinceState(
  ch: ClickHouse,
  scope: RefreshScope,
  slots: readonly RollupSlot[],
  state: State,
  steps: { leftovers: boolean; listed: () => Promise<void> },
): Promise<{ result: RefreshResult; generations: Map<string, number> }> {
  const { generations, byKey, stale } = sortSlots(scope, slots, state);
  const fresh = state.watermark < scope.watermark && byKey.size > 0;
  await run(ch, (params) => listChangedUnits(params, scope, state.unitsFrom, steps.leftovers));
  if (fresh) await run(ch, (params) => copyNewEvents(params, scope, [...byKey.keys()], state.watermark));
  await steps.listed();
  await run(ch, (params) => writeUnits(params, scope, true));
  await run(ch, (params) => writeTouched(params, scope, state.unitsFrom, fresh));
  for (const [key, keySlots] of byKey) await run(ch, (params) => refreshKeyRows(params, scope, key, keySlots, !steps.leftovers));
  for (const slot of stale) await run(ch, (params) => buildSlotRows(params, scope, slot, scope.version, unitsNow(params, scope, state.unitsFrom)));
  const counts = await firstRow(ch, (params) => refreshCounts(params, scope, stale.length > 0));
  const eventsRead = toNumber(counts.built) + toNumber(counts.events);
  const unitsRefreshed = stale.length > 0 ? await countUnits(ch, scope, state.unitsFrom) : toNumber(counts.changed_units) + toNumber(counts.units);
  return { result: { events_read: eventsRead, units_refreshed: unitsRefreshed }, generations };
}

async function commit(
  ch: ClickHouse,
  scope: RefreshScope,
  slots: readonly RollupSlot[],
  unitsFrom: number,
  generations: ReadonlyMap<string, number>,
  totals: KeptTotals,
  mirrorNow: number,
): Promise<void> {
  const definitions = Object.fromEntries(slots.map((slot) => [slot.metric_id, slotHash(slot, scope.stoppedAt)]));
  const row = {
    experiment_id: scope.experimentId,
    version: scope.version,
    watermark: scope.watermark,
    units_from: unitsFrom,
    slot_ids: slots.map((slot) => slot.metric_id),
    slot_generations: slots.map((slot) => generations.get(slot.metric_id) ?? scope.version),
    mirror_seen: mirrorNow,
    definitions: JSON.stringify(definitions),
    totals_plan: totals.plan,
    totals: JSON.stringify(totals.rows),
    slices: totals.slices,
  };
  await ch.client.insert({ table: 'rollup_state', values: [row], format: 'JSONEachRow' });
}

export interface ClickHouseRefreshOptions {
  /** The snapshot's committed drain number (clickhouse/events.ts committedDrain): the refresh reads the events drained up to it. */
  watermark: number;
  /** Build everything from raw events, whatever the state says. */
  rebuild?: boolean;
  /** Tests: runs after every write and before the commit. */
  beforeCommit?: (() => Promise<void>) | undefined;
  /** Tests: MAX_COMPARED_BY_SET instead. */
  comparedBySetAtMost?: number | undefined;
  /** The totals to keep with the rollups (totals.ts), or null. */
  plan?: TotalsPlan | null;
}

/** Brings the experiment's rollups in ClickHouse up to date for these slots, one refresh of an experiment at a time (`queue`). */
export async function refreshInClickHouse(
  ctx: ClickHouseStoreDeps,
  ch: ClickHouse,
  queue: RefreshQueue,
  row: ExperimentRow,
  slots: readonly RollupSlot[],
  options: ClickHouseRefreshOptions,
): Promise<RefreshResult> {
  return oneAtATime(ctx, queue, row.id, async () => {
    const { watermark } = options;
    const loaded = options.rebuild ? null : await loadState(ch, row.id);
    // A state committed without totals predates rollup_units' breakdown values (ClickHouse migration 0005): built again once.
    const state = loaded !== null && loaded.watermark <= watermark && loaded.totalsPlan !== '' ? loaded : null;
    const mirrorSeen = state === null ? 0 : Math.max(0, state.mirrorSeen - MIRROR_MARGIN);
    // The mirrored version is read before the units are compared: a row mirrored later is newer, and the next refresh compares its unit.
    const {
      version,
      mirrored: mirrorNow,
      leftovers,
      mirroredSince,
    } = await prelude(ch, row.id, { committed: loaded?.version ?? 0, mirrorSeen }, ctx.clock.now());
    const scope: RefreshScope = {
      workspaceId: row.workspace_id,
      experimentId: row.id,
      stoppedAt: row.stopped_at,
      version,
      committed: loaded?.version ?? 0,
      watermark,
      mirrorSeen: mirroredSince > (options.comparedBySetAtMost ?? MAX_COMPARED_BY_SET) ? 0 : mirrorSeen,
    };
    const keeper = keepTotals(ch, scope, { plan: options.plan ?? null, state, slots, leftovers });
    let result: RefreshResult;
    let generations = new Map<string, number>();
    if (state === null) result = await fromScratch(ch, scope, slots);
    else ({ result, generations } = await sinceState(ch, scope, slots, state, { leftovers, listed: keeper.listed }));
    const unitsFrom = state === null ? version : state.unitsFrom;
    const totals = await keeper.written(generations, unitsFrom);
    await options.beforeCommit?.();
    await commit(ch, scope, slots, unitsFrom, generations, totals, mirrorNow);
    return result;
  });
}

/** The refresh of each experiment running in this process (the store owns one). */
export type RefreshQueue = Map<string, Promise<unknown>>;

/** Runs `work` after any refresh of the experiment in this process, and (PostgreSQL) under its advisory lock. */
async function oneAtATime<T>(ctx: ClickHouseStoreDeps, running: RefreshQueue, experimentId: string, work: () => Promise<T>): Promise<T> {
  const previous = running.get(experimentId) ?? Promise.resolve();
  const locked = async () => {
    if (ctx.seam.name !== 'postgres') return work();
    const lock = sql`hashtextextended(${`verdict.analysis.clickhouse-rollups:${experimentId}`}, 0)`;
    return ctx.db.connection().execute(async (connection) => {
      await sql`SELECT pg_advisory_lock(${lock})`.execute(connection);
      try {
        return await work();
      } finally {
        await sql`SELECT pg_advisory_unlock(${lock})`.execute(connection);
      }
    });
  };
  const next = previous.then(locked, locked);
  const settled = next.catch(() => undefined);
  running.set(experimentId, settled);
  try {
    return await next;
  } finally {
    if (running.get(experimentId) === settled) running.delete(experimentId);
  }
}

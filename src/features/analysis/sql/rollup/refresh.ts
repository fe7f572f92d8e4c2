/**
 * The incremental refresh of an experiment's rollups (docs/analysis.md "Incremental analysis").
 * One transaction, so a refresh interrupted anywhere (kill -9 included) leaves the rollups and
 * their watermark as the last complete refresh left them:
 * 1. the watermark of what this transaction sees, and the state of the last refresh;
 * 2. without a state (first refresh, `--rebuild`) or with a watermark that no longer holds:
 *    every unit and every metric's rows are built from raw events;
 * 3. otherwise, units whose exposure changed since (new, logged late, superseded, re-assigned)
 *    are replaced and their rows built from all their events; metrics whose definition hash
 *    changed (or that are new to the experiment) are built for all units; every other metric's
 *    rows gain the events committed since the watermark (late ones included);
 * 4. the new watermark and the definition hashes are stored.
 * On SQLite a refresh with many new events goes in rounds, each its own transaction: while the
 * process serves, the first takes every changed exposure and the first ROUND_EVENTS new events,
 * each next one the next events (as many as take about 25 ms); while it serves nothing, a round
 * takes up to IDLE_ROUND_EVENTS. The rounds stop at the last event there was when the first one
 * began, so no transaction holds the one writer for long while serving and the rounds end however
 * fast events arrive (refreshRollups).
 * Two refreshes of one experiment never overlap: SQLite's write lock serialises them (BEGIN
 * IMMEDIATE), and on PostgreSQL a session advisory lock per experiment is taken before the
 * REPEATABLE READ transaction starts, so each refresh's snapshot includes the previous one's commit.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor, Tx } from '../../../../db/database.js';
import { PieceSize } from '../../../../db/background-writes.js';
import { sqliteSeam } from '../../../../db/dialect.js';
import { inlineWrites, type WriteTask } from '../../../../db/write-tasks.js';
import type { ExperimentRow } from '../../../experiments/read.js';
import type { SqlStoreDeps } from '../deps.js';
import { analysisSettingsOf } from '../dialect-settings.js';
import { addStaged, stagedCounts, stagedSlotEvents, stagedUnits, stageNewEvents, stageUnits, type Staged } from './fresh.js';
import { buildSlot, dropSlots, eventsInSlot, eventsThrough, replaceUnits, type RollupScope } from './slot-sql.js';
import { buildInSteps } from './steps.js';
import { storedPlanHash } from './kept-slices.js';
import { maintainTotals, rebuildTotals, type Touched } from './totals.js';
import {
  capEvents,
  currentWatermark,
  eventRoundEnd,
  eventsAfter,
  unitsChangedBetween,
  watermarkHolds,
  type RowMark,
  type Watermark,
} from '../../store/watermark.js';
import type { RefreshResult, RollupSlot, TotalsPlan } from '../../store/contract.js';
import { slotHash } from '../../store/fold.js';

/** What the refresh's statements need of the context: they may run on the writer thread, which has only its connection. */
type SeamDeps = Pick<SqlStoreDeps, 'seam'>;

/**
 * New events in the first round of a SQLite refresh while the process serves; the next rounds are
 * sized to take about PIECE_TARGET_MS (db/background-writes.ts). In one transaction, a refresh
 * after a build under load (about 50,000 new events) held the main file's write lock for 0.5 to
 * 5 s, with first assignments, the drain and the job queue's writes queued behind it; rounds of
 * 1,000 take 35 to 70 ms under the same load. The rounds stop at the events there were when the
 * refresh began: chasing the events still arriving, a catch-up had not ended after 400 s
 * (docs/benchmarks.md "Latency under sustained load").
 */
export const ROUND_EVENTS = 1_000;
const MIN_ROUND_EVENTS = 100;
/** The most new events of a round sized by time while the process serves (PieceSize). */
export const MAX_ROUND_EVENTS = 50_000;
/**
 * The new events of every round while the process serves nothing (BackgroundWrites.serving): all
 * of a refresh after +1% at 4M units (200,000) in one round, each touched unit read and written
 * once. In rounds of 50,000 those events touched 145,993 units instead of 48,007 (a unit whose new
 * events lie in several rounds is read and written in each), and a refresh after +1% at 1M units
 * in 25-ms rounds had taken 187 rounds. Such a round holds the writer thread for about 1 s per
 * 100,000 new events at 4M units, so the first request after a quiet spell may wait up to about
 * 2.5 s; the rounds after it are sized to PIECE_TARGET_MS. The bound keeps a backlog (after an
 * outage, a long quiet spell) from becoming one transaction of unbounded length.
 */
export const IDLE_ROUND_EVENTS = 250_000;

export interface RefreshOptions {
  /** Build everything from raw events, whatever the state says. */
  rebuild?: boolean;
  /** The per-variant and per-slice totals to keep up to date with the rollups (sql/rollup/totals.ts); none without. */
  plan?: TotalsPlan | null | undefined;
  /** Tests: runs inside the transaction after every write and before the watermark is stored. */
  beforeCommit?: () => Promise<void>;
  /** Tests: runs after each committed step of a SQLite build in steps (sql/rollup/steps.ts). */
  afterStep?: () => Promise<void>;
  /** Tests: units per step of a SQLite build in steps. */
  stepUnits?: number;
  /** Tests: new events per every round of a SQLite refresh; without, rounds start at ROUND_EVENTS and are sized by time (PieceSize). */
  roundEvents?: number;
}

interface State {
  watermark: Watermark;
  definitions: Record<string, string>;
  /** The hash of the plan the totals were kept for, or null. */
  totalsPlan: string | null;
}

async function loadState(executor: Executor, experimentId: string): Promise<State | null> {
  const row = await executor
    .selectFrom('analysis_rollup_state')
    .select(['watermark', 'definitions', 'totals_plan', 'progress'])
    .where('experiment_id', '=', experimentId)
    .executeTakeFirst();
  // A build in steps not finished yet describes no complete refresh.
  if (!row || row.progress !== null) return null;
  return {
    watermark: JSON.parse(row.watermark) as Watermark,
    definitions: JSON.parse(row.definitions) as Record<string, string>,
    totalsPlan: row.totals_plan,
  };
}

async function saveState(executor: Executor, row: ExperimentRow, state: State, now: number): Promise<void> {
  const values = {
    watermark: JSON.stringify(state.watermark),
    definitions: JSON.stringify(state.definitions),
    totals_plan: state.totalsPlan,
    progress: null,
    refreshed_at: now,
  };
  await executor
    .insertInto('analysis_rollup_state')
    .values({ experiment_id: row.id, workspace_id: row.workspace_id, ...values })
    .onConflict((oc) => oc.column('experiment_id').doUpdateSet(values))
    .execute();
}

/** Builds the slots for the units `units` selects (all when null); returns the events read. */
async function buildSlots(ctx: SeamDeps, trx: Executor, scope: RollupScope, slots: readonly RollupSlot[], units: RawBuilder<unknown> | null): Promise<number> {
  let events = 0;
  for (const slot of slots) {
    await buildSlot(trx, ctx.seam, scope, slot, units);
    events += await eventsInSlot(trx, scope, slot.metric_id, units);
  }
  return events;
}

async function fromScratch(ctx: SeamDeps, trx: Executor, scope: RollupScope, slots: readonly RollupSlot[]): Promise<RefreshResult> {
  const units = await replaceUnits(trx, scope.experimentId, null);
  return { events_read: await buildSlots(ctx, trx, scope, slots, null), units_refreshed: units };
}

async function countUnits(trx: Executor, experimentId: string): Promise<number> {
  const result = await sql<{ units: unknown }>`SELECT COUNT(*) AS units FROM analysis_rollup_units WHERE experiment_id = ${experimentId}`.execute(trx);
  return Number(result.rows[0]?.units ?? 0);
}

function staleSlots(slots: readonly RollupSlot[], state: State, stoppedAt: number | null): RollupSlot[] {
  return slots.filter((slot) => state.definitions[slot.metric_id] !== slotHash(slot, stoppedAt));
}

/**
 * What a refresh since the stored state adds: the state, and the units whose exposure changed
 * since its watermark (a query of unit ids), or null when no exposure can have changed.
 */
interface Since {
  state: State;
  changed: RawBuilder<unknown> | null;
}

/**
 * Stages the new events of the slots (sql/rollup/fresh.ts) for the units whose exposure did not change
 * since the watermark (those are built again from all of their events); null without a slot.
 */
async function stage(ctx: SeamDeps, trx: Executor, scope: RollupScope, slots: readonly RollupSlot[], since: Since): Promise<Staged | null> {
  const keys = [...new Set(slots.map((slot) => slot.event_key))];
  if (keys.length === 0) return null;
  const notChanged = since.changed === null ? sql`1 = 1` : sql`x.unit_id NOT IN (${since.changed})`;
  const fresh = sql`${eventsAfter(since.state.watermark, scope.workspaceId, keys)}${eventsThrough(scope)}`;
  return stageNewEvents(trx, ctx.seam, scope, slots, fresh, notChanged);
}

/** Lists the units a refresh since the watermark changes: those whose exposure changed (replaced), and those with staged new events. */
async function touchUnits(trx: Executor, scope: RollupScope, since: Since, staged: Staged | null): Promise<Touched> {
  const listed = [...(since.changed === null ? [] : [since.changed]), ...(staged === null ? [] : [stagedUnits(staged)])];
  if (listed.length > 0) {
    // DISTINCT: a lone list is no UNION, and a re-bucketed unit is listed once per changed exposure.
    await sql`INSERT INTO analysis_rollup_touched (experiment_id, unit_id)
      SELECT DISTINCT ${scope.experimentId}, t.unit_id FROM (${sql.join(listed, sql` UNION `)}) AS t`.execute(trx);
  }
  return { fresh: staged, replaced: since.changed };
}

/**
 * Everything since the watermark: stale slots rebuilt, changed units replaced, and the new events
 * added to the other units' rows of every current slot (staged here unless `staged` says they were).
 */
async function sinceWatermark(
  ctx: SeamDeps,
  trx: Executor,
  scope: RollupScope,
  slots: readonly RollupSlot[],
  since: Since,
  staged?: Staged | null,
): Promise<RefreshResult> {
  const { state, changed } = since;
  const hashes = new Map(slots.map((slot) => [slot.metric_id, slotHash(slot, scope.stoppedAt)]));
  const stale = staleSlots(slots, state, scope.stoppedAt);
  const current = slots.filter((slot) => !stale.includes(slot));
  const fresh = staged === undefined ? await stage(ctx, trx, scope, current, since) : staged;
  const gone = Object.keys(state.definitions).filter((id) => !hashes.has(id));
  await dropSlots(trx, scope.experimentId, [...gone, ...stale.map((slot) => slot.metric_id)]);
  const replaced = changed === null ? 0 : await replaceUnits(trx, scope.experimentId, changed);
  let eventsRead = 0;
  if (current.length > 0 && changed !== null) {
    const built = await stageUnits(trx, ctx.seam, scope, current, sql`x.unit_id IN (${changed})`);
    eventsRead += await stagedSlotEvents(trx, built);
    await addStaged(trx, ctx.seam, scope.experimentId, built);
  }
  const added = fresh === null ? { events: 0, units: 0 } : await stagedCounts(trx, fresh);
  if (fresh !== null) await addStaged(trx, ctx.seam, scope.experimentId, fresh);
  eventsRead += added.events + (await buildSlots(ctx, trx, scope, stale, null));
  const unitsRefreshed = stale.length > 0 ? await countUnits(trx, scope.experimentId) : replaced + added.units;
  return { events_read: eventsRead, units_refreshed: unitsRefreshed };
}

/**
 * Brings the rollups up to date in the transaction, and the totals of `plan` with them: by the
 * touched units' differences when the totals are current and no metric is rebuilt for every
 * unit, otherwise by adding them up again.
 */
async function refreshIn(ctx: SeamDeps, trx: Executor, scope: RollupScope, slots: readonly RollupSlot[], since: Since | null, plan: TotalsPlan | null) {
  if (since === null) {
    const result = await fromScratch(ctx, trx, scope, slots);
    if (plan) await rebuildTotals(trx, ctx.seam, scope.experimentId, plan);
    return result;
  }
  const { state } = since;
  const incremental = plan !== null && state.totalsPlan === storedPlanHash(plan) && staleSlots(slots, state, scope.stoppedAt).length === 0;
  if (!incremental) {
    const result = await sinceWatermark(ctx, trx, scope, slots, since);
    if (plan) await rebuildTotals(trx, ctx.seam, scope.experimentId, plan);
    return result;
  }
  // Each statement from here on reads what is new, in milliseconds; PostgreSQL's JIT would spend
  // 0.3 to 1 s compiling some of them (their estimates charge the changed units' list once per new
  // event), and their sorts of the new events by unit went to disk with the default 4 MB.
  for (const setting of analysisSettingsOf(ctx.seam).refreshSession) await setting.execute(trx);
  let result: RefreshResult = { events_read: 0, units_refreshed: 0 };
  let staged: Staged | null = null;
  await maintainTotals(
    trx,
    ctx.seam,
    scope.experimentId,
    plan,
    async () => {
      // No slot is stale here: every slot gains the new events.
      staged = await stage(ctx, trx, scope, slots, since);
      return touchUnits(trx, scope, since, staged);
    },
    async () => {
      result = await sinceWatermark(ctx, trx, scope, slots, since, staged);
    },
  );
  return result;
}

/** Runs `work` in the refresh's transaction on PostgreSQL, never beside another refresh of the same experiment. */
async function inPostgresRefreshTransaction<T>(ctx: SqlStoreDeps, experimentId: string, work: (trx: Executor) => Promise<T>): Promise<T> {
  const lock = sql`hashtextextended(${`verdict.analysis.rollups:${experimentId}`}, 0)`;
  return ctx.db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${lock})`.execute(connection);
    try {
      return await connection.transaction().setIsolationLevel('repeatable read').execute(work);
    } finally {
      await sql`SELECT pg_advisory_unlock(${lock})`.execute(connection);
    }
  });
}

/** What the refresh's transaction is given: plain data, as on SQLite it may run on the writer thread. */
export interface RefreshInput {
  row: ExperimentRow;
  slots: readonly RollupSlot[];
  /** Ignore the stored state: build every unit from raw events. */
  rebuild: boolean;
  plan: TotalsPlan | null;
  now: number;
  /** Tests only, and then not on the writer thread: runs before the watermark is stored. */
  beforeCommit?: (() => Promise<void>) | undefined;
  /** SQLite: refresh only this many new events past the stored watermark (a round); all without. */
  roundEvents?: number | undefined;
  /** SQLite rounds after the first: the last event the first round saw, where the rounds stop. */
  until?: RowMark | null | undefined;
}

/**
 * A refresh's transaction; `more` when it was a round and events up to `until` remain past its
 * watermark; `lastEvent` the last event the transaction saw (SQLite), where the first round's
 * next rounds stop.
 */
type RoundResult = RefreshResult & { more: boolean; lastEvent: RowMark | null };

async function refreshWithin(ctx: SeamDeps, trx: Executor, input: RefreshInput): Promise<RoundResult> {
  const { row, slots, rebuild, plan, now, beforeCommit, roundEvents } = input;
  const current = await currentWatermark(trx, ctx.seam);
  const state = rebuild ? null : await loadState(trx, row.id);
  const trusted = state !== null && (await watermarkHolds(trx, ctx.seam, state.watermark));
  // A round's watermark keeps the changed exposures of now and bounds only the events: every
  // unit's rows, rebuilt or added to, then count exactly the events up to that bound.
  const target = trusted && input.until !== undefined ? capEvents(current, state.watermark, input.until) : current;
  const round = trusted && roundEvents !== undefined ? await eventRoundEnd(trx, state.watermark, target, roundEvents) : null;
  const watermark = round ?? target;
  // Only a watermark short of what this transaction sees bounds the events: the statements of a
  // refresh that takes everything keep their plans.
  const bound = watermark !== current && watermark.kind === 'sqlite' ? watermark.events?.rowid : undefined;
  const scope: RollupScope = { workspaceId: row.workspace_id, experimentId: row.id, stoppedAt: row.stopped_at, eventsThroughRowid: bound };
  const since = trusted ? { state, changed: unitsChangedBetween(state.watermark, watermark, row.id) } : null;
  const result = await refreshIn(ctx, trx, scope, slots, since, plan);
  await beforeCommit?.();
  const definitions = Object.fromEntries(slots.map((slot) => [slot.metric_id, slotHash(slot, scope.stoppedAt)]));
  await saveState(trx, row, { watermark, definitions, totalsPlan: plan ? storedPlanHash(plan) : null }, now);
  return { ...result, more: round !== null, lastEvent: current.kind === 'sqlite' ? current.events : null };
}

/**
 * The refresh's transaction on SQLite, as a write task: on a SQLite file it runs on the writer
 * thread beside first assignments (they take turns on the file's write lock anyway), so the API's
 * event loop never runs its statements, which read every event since the last refresh.
 */
export const refreshOnSqlite: WriteTask<RefreshInput, RoundResult & { ms: number }> = Object.assign(
  async (trx: Tx, input: RefreshInput) => {
    const started = performance.now();
    const round = await refreshWithin({ seam: sqliteSeam }, trx, input);
    return { ...round, ms: performance.now() - started }; // the round's statements' time, for sizing the next
  },
  { writerTask: 'analysis.refresh' },
);

/** Brings the experiment's rollups up to date for these slots. */
export async function refreshRollups(
  ctx: SqlStoreDeps,
  row: ExperimentRow,
  slots: readonly RollupSlot[],
  options: RefreshOptions = {},
): Promise<RefreshResult> {
  const onWriter = analysisSettingsOf(ctx.seam).refreshRuns === 'writer';
  const stepped = onWriter ? await buildFirstInSteps(ctx, row, slots, options) : null;
  const input: RefreshInput = { row, slots, rebuild: options.rebuild === true && !stepped, plan: options.plan ?? null, now: ctx.clock.now() };
  const { beforeCommit } = options;
  let refreshed: RefreshResult;
  if (!onWriter) refreshed = await inPostgresRefreshTransaction(ctx, row.id, (trx) => refreshWithin(ctx, trx, { ...input, beforeCommit }));
  // A test's hook cannot cross to the writer thread: the same task then runs on this thread.
  else if (beforeCommit) refreshed = await inlineWrites(ctx.db).run(refreshOnSqlite, { ...input, beforeCommit });
  else refreshed = await refreshInRounds(ctx, input, options.roundEvents);
  if (!stepped) return refreshed;
  return { events_read: stepped.events_read + refreshed.events_read, units_refreshed: stepped.units_refreshed + refreshed.units_refreshed };
}

/**
 * SQLite: the refresh's transactions on the writer thread, a round of new events each, taking
 * turns with other background writes and resting between them (db/background-writes.ts), up to
 * the last event the first round saw: what arrives meanwhile is the next refresh's. A unit
 * touched in several rounds counts in units_refreshed once per round.
 */
async function refreshInRounds(ctx: SqlStoreDeps, input: RefreshInput, fixedRoundEvents: number | undefined): Promise<RefreshResult> {
  const total: RefreshResult = { events_read: 0, units_refreshed: 0 };
  const size = fixedRoundEvents === undefined ? new PieceSize(ROUND_EVENTS, MIN_ROUND_EVENTS, MAX_ROUND_EVENTS) : null;
  let until: RowMark | null | undefined;
  for (;;) {
    const sized = fixedRoundEvents === undefined && ctx.background.serving;
    const roundEvents = fixedRoundEvents ?? (sized ? (size as PieceSize).current : IDLE_ROUND_EVENTS);
    const round = await ctx.background.run(() => ctx.writes.run(refreshOnSqlite, { ...input, roundEvents, until, now: ctx.clock.now() }));
    if (sized) size?.observe(round.ms);
    total.events_read += round.events_read;
    total.units_refreshed += round.units_refreshed;
    if (!round.more) return total;
    if (until === undefined) until = round.lastEvent;
  }
}

/**
 * SQLite: when the refresh would build every unit (no state, `--rebuild`, a watermark that no
 * longer holds, a metric or the totals' plan to rebuild), the build goes first, in short steps
 * (sql/rollup/steps.ts), so that the refresh's own transaction is short. Null when none was needed.
 */
async function buildFirstInSteps(ctx: SqlStoreDeps, row: ExperimentRow, slots: readonly RollupSlot[], options: RefreshOptions): Promise<RefreshResult | null> {
  const definitions = Object.fromEntries(slots.map((slot) => [slot.metric_id, slotHash(slot, row.stopped_at)]));
  const plan = options.plan ?? null;
  const hash = plan ? storedPlanHash(plan) : null;
  const state = await loadState(ctx.db, row.id);
  const current =
    !options.rebuild &&
    state !== null &&
    (await watermarkHolds(ctx.db, ctx.seam, state.watermark)) &&
    staleSlots(slots, state, row.stopped_at).length === 0 &&
    (plan === null || state.totalsPlan === hash);
  if (current) return null;
  return buildInSteps(
    ctx,
    row,
    { slots, definitions, plan, planHash: hash },
    { restart: options.rebuild === true, afterStep: options.afterStep, stepUnits: options.stepUnits },
  );
}

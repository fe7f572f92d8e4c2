/**
 * A SQLite build of an experiment's rollups in short steps (docs/analysis.md "Incremental
 * analysis"). SQLite has one writer: one transaction building a million units would hold the
 * API's other writes (first assignments, the event drain) for a minute. So a first build, a
 * `--rebuild`, or a metric rebuilt for every unit goes in steps of a few thousand units, each its
 * own transaction on the writer thread (`buildStep`), with other writes taking turns between them:
 * 1. one transaction takes the watermark W of what it sees and records the build (state.progress);
 * 2. steps delete the experiment's old rollups, a bounded number of rows each;
 * 3. each step builds the next units in unit_id order: the live exposures as of W, their rows from
 *    the events up to W (rowid order is commit order), their totals; and records the last unit;
 * 4. the last step stores W as the state's watermark. The refresh then brings everything since W
 *    up to date in one short transaction, as after any other refresh.
 * A build killed at any point resumes from its last step (each step commits its rows with its
 * progress); two at once take turns step by step, each step reading the progress it continues.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Executor, Tx } from '../../../../db/database.js';
import { sqliteSeam } from '../../../../db/dialect.js';
import { PieceSize } from '../../../../db/background-writes.js';
import type { WriteTask } from '../../../../db/write-tasks.js';
import type { ExperimentRow } from '../../../experiments/read.js';
import type { SqlStoreDeps } from '../deps.js';
import { buildSlot, eventsInSlot, type RollupScope } from './slot-sql.js';
import { newCells } from './stored-cells.js';
import { addUnitRange, applyCells } from './totals.js';
import { currentWatermark, watermarkHolds, type Watermark } from '../../store/watermark.js';
import type { RefreshResult, RollupSlot, TotalsPlan } from '../../store/contract.js';

/**
 * Units of the first build step; the next ones are sized to take about PIECE_TARGET_MS. A step
 * holds the main file's write lock and the writer thread: first assignments and drains queued
 * behind it wait for it. 2,000 units took 50 ms on an idle machine and up to 400 ms under load.
 */
export const STEP_UNITS = 500;
const MIN_STEP_UNITS = 50;
const MAX_STEP_UNITS = 20_000;
/** Rows deleted per step when the old rollups go. */
const DELETE_ROWS = 5_000;

interface Progress {
  /** The target of the build: each slot's definition hash, and the totals' plan hash. */
  definitions: Record<string, string>;
  totalsPlan: string | null;
  clearing: boolean;
  /** The last unit built (null: none yet). */
  after: string | null;
}

type SqliteMark = Extract<Watermark, { kind: 'sqlite' }>;

export interface BuildTarget {
  slots: readonly RollupSlot[];
  definitions: Record<string, string>;
  plan: TotalsPlan | null;
  planHash: string | null;
}

async function loadBuild(trx: Executor, experimentId: string): Promise<{ mark: Watermark; progress: Progress } | null> {
  const row = await trx.selectFrom('analysis_rollup_state').select(['watermark', 'progress']).where('experiment_id', '=', experimentId).executeTakeFirst();
  if (!row?.progress) return null;
  return { mark: JSON.parse(row.watermark) as Watermark, progress: JSON.parse(row.progress) as Progress };
}

async function saveProgress(trx: Executor, row: ExperimentRow, mark: Watermark, progress: Progress, now: number): Promise<void> {
  const values = { watermark: JSON.stringify(mark), definitions: '{}', totals_plan: null, progress: JSON.stringify(progress), refreshed_at: now };
  await trx
    .insertInto('analysis_rollup_state')
    .values({ experiment_id: row.id, workspace_id: row.workspace_id, ...values })
    .onConflict((oc) => oc.column('experiment_id').doUpdateSet(values))
    .execute();
}

const sameTarget = (progress: Progress, target: BuildTarget) =>
  progress.totalsPlan === target.planHash && JSON.stringify(progress.definitions) === JSON.stringify(target.definitions);

/** The build to continue (its own, or another refresh's with the same target), or a new one from now. */
async function startOrResume(ctx: SqlStoreDeps, row: ExperimentRow, target: BuildTarget, restart: boolean): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const build = await loadBuild(trx, row.id);
    if (!restart && build && sameTarget(build.progress, target) && (await watermarkHolds(trx, ctx.seam, build.mark))) return;
    const mark = await currentWatermark(trx, ctx.seam);
    await saveProgress(trx, row, mark, { definitions: target.definitions, totalsPlan: target.planHash, clearing: true, after: null }, ctx.clock.now());
  });
}

/** Deletes up to DELETE_ROWS of the experiment's rows of `table`; the rows deleted. */
async function deleteSome(trx: Executor, table: string, experimentId: string): Promise<number> {
  const result =
    await sql`DELETE FROM ${sql.table(table)} WHERE rowid IN (SELECT rowid FROM ${sql.table(table)} WHERE experiment_id = ${experimentId} LIMIT ${sql.lit(DELETE_ROWS)})`.execute(
      trx,
    );
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The experiment's exposures `x` live as of the watermark, in a range of unit ids: those live
 * now (through the live-exposure index) and those superseded since (through superseded_seq's
 * index; few), each read from its own index rather than from every exposure of the experiment.
 */
function liveAsOf(experimentId: string, mark: SqliteMark, range: RawBuilder<unknown>): RawBuilder<unknown> {
  const seen = sql`x.rowid <= ${mark.exposures?.rowid ?? 0}`;
  return sql`SELECT x.rowid AS rid FROM exposures AS x WHERE x.experiment_id = ${experimentId} AND x.superseded_at IS NULL AND ${seen}${range}
    UNION ALL SELECT x.rowid FROM exposures AS x WHERE x.superseded_seq > ${mark.superseded} AND +x.experiment_id = ${experimentId} AND ${seen}${range}`;
}

/**
 * The last unit id of the step after `after`, or null when the rest fits in this step. Steps are
 * ranges of unit ids, cut along the live-exposure index (which delivers them in order); each
 * step then builds the units live as of the watermark within its range.
 */
async function stepEnd(trx: Executor, experimentId: string, after: string | null, units: number): Promise<string | null> {
  const lower = after === null ? sql`` : sql` AND x.unit_id > ${after}`;
  const result = await sql<{ unit_id: string }>`SELECT x.unit_id AS unit_id FROM exposures AS x
    WHERE x.experiment_id = ${experimentId} AND x.superseded_at IS NULL${lower} ORDER BY x.unit_id LIMIT 1 OFFSET ${sql.lit(units - 1)}`.execute(trx);
  return result.rows[0]?.unit_id ?? null;
}

/** Builds the units in (after, through] as of the watermark: their unit rows, their slots' rows, their totals. */
async function buildRange(trx: Executor, scope: RollupScope, target: BuildTarget, mark: SqliteMark, range: { after: string | null; through: string | null }) {
  const lower = range.after === null ? sql`` : sql` AND x.unit_id > ${range.after}`;
  const upper = range.through === null ? sql`` : sql` AND x.unit_id <= ${range.through}`;
  const inserted = await sql`INSERT INTO analysis_rollup_units (experiment_id, unit_id, id, variant_key, exposed_at, source_key_id, dimension_values)
    SELECT x.experiment_id, x.unit_id, x.id, x.variant_key, x.exposed_at, x.source_key_id, a.dimension_values FROM exposures AS x
    LEFT JOIN assignments AS a ON a.experiment_id = x.experiment_id AND a.unit_id = x.unit_id
    WHERE x.rowid IN (${liveAsOf(scope.experimentId, mark, sql`${lower}${upper}`)})`.execute(trx);
  const units = sql`1 = 1${lower}${upper}`;
  const bounded: RollupScope = { ...scope, eventsThroughRowid: mark.events?.rowid ?? 0 };
  let events = 0;
  for (const slot of target.slots) {
    await buildSlot(trx, sqliteSeam, bounded, slot, units);
    events += await eventsInSlot(trx, scope, slot.metric_id, units);
  }
  if (target.plan) {
    const cells = newCells();
    await addUnitRange(trx, sqliteSeam, scope.experimentId, target.plan, cells, range);
    await applyCells(trx, scope.experimentId, cells);
  }
  return { events, units: Number(inserted.numAffectedRows ?? 0) };
}

/** What one step is given: plain data, as it may run on the writer thread (db/write-tasks.ts). */
export interface StepInput {
  row: ExperimentRow;
  target: BuildTarget;
  stepUnits: number;
  now: number;
}

/** What one step did; `more` is false when the build is complete (or gone: another refresh finished it). */
export interface StepOutcome {
  more: boolean;
  events: number;
  units: number;
  /** The build's statements' time in ms, for sizing the next step; null for a step that only deleted old rows. */
  ms: number | null;
}

/**
 * One step of the build in its own transaction. A write task: on a SQLite file it runs on the
 * writer thread that also writes first assignments (they take turns on the file's write lock
 * anyway), so the API's event loop never runs a step's statements; a first build or a rebuild of
 * a million units is hundreds of steps, and on the API's thread they held requests for a
 * large share of the build's seconds (docs/benchmarks.md "Latency under sustained load").
 */
export const buildStep: WriteTask<StepInput, StepOutcome> = Object.assign(
  async (trx: Tx, { row, target, stepUnits, now }: StepInput): Promise<StepOutcome> => {
    const scope: RollupScope = { workspaceId: row.workspace_id, experimentId: row.id, stoppedAt: row.stopped_at };
    const build = await loadBuild(trx, row.id);
    if (!build || build.mark.kind !== 'sqlite') return { more: false, events: 0, units: 0, ms: null };
    const { mark, progress } = build;
    if (progress.clearing) {
      let deleted = 0;
      for (const table of ['analysis_rollup_values', 'analysis_rollup_units', 'analysis_rollup_totals']) deleted += await deleteSome(trx, table, row.id);
      if (deleted === 0) await saveProgress(trx, row, mark, { ...progress, clearing: false }, now);
      return { more: true, events: 0, units: 0, ms: null };
    }
    const started = performance.now();
    const through = await stepEnd(trx, row.id, progress.after, stepUnits);
    const built = await buildRange(trx, scope, target, mark, { after: progress.after, through });
    if (through !== null) {
      await saveProgress(trx, row, mark, { ...progress, after: through }, now);
      return { more: true, ...built, ms: performance.now() - started };
    }
    const done = { watermark: JSON.stringify(mark), definitions: JSON.stringify(progress.definitions), totals_plan: progress.totalsPlan, progress: null };
    await trx.updateTable('analysis_rollup_state').set(done).where('experiment_id', '=', row.id).execute();
    return { more: false, ...built, ms: performance.now() - started };
  },
  { writerTask: 'analysis.build-step' },
);

export interface StepOptions {
  /** Start again even when a build is in progress (`--rebuild`). */
  restart: boolean;
  /** Tests: called after each committed step (throwing stops the build there). */
  afterStep?: (() => Promise<void>) | undefined;
  /** Units per every step (tests make it small); without, steps start at STEP_UNITS and are sized by time (PieceSize). */
  stepUnits?: number | undefined;
}

/** Builds the rollups for `target` in steps, from a new watermark or from where an interrupted build stopped. */
export async function buildInSteps(ctx: SqlStoreDeps, row: ExperimentRow, target: BuildTarget, options: StepOptions): Promise<RefreshResult> {
  await startOrResume(ctx, row, target, options.restart);
  const result: RefreshResult = { events_read: 0, units_refreshed: 0 };
  const size = options.stepUnits === undefined ? new PieceSize(STEP_UNITS, MIN_STEP_UNITS, MAX_STEP_UNITS) : null;
  for (;;) {
    const input: StepInput = { row, target, stepUnits: options.stepUnits ?? (size as PieceSize).current, now: ctx.clock.now() };
    // Steps of every experiment take turns, resting between them (db/background-writes.ts).
    const outcome = await ctx.background.run(() => ctx.writes.run(buildStep, input));
    result.events_read += outcome.events;
    result.units_refreshed += outcome.units;
    if (outcome.ms !== null) size?.observe(outcome.ms, ctx.background.pieceTargetMs);
    if (!outcome.more) return result;
    await options.afterStep?.();
  }
}

/**
 * The maintained totals of the incremental analysis in ClickHouse (docs/analysis.md "Incremental
 * analysis in ClickHouse"): per slice (the whole experiment, or one value of one breakdown) and
 * variant, the units and each metric's sufficient statistics, the same cells as the SQL stores'
 * (sql/rollup/totals.ts, whose exact arithmetic this reuses). A refresh takes away the old
 * contributions of the units it touched (their rows as of the committed refresh) and adds their
 * new ones (as of its own version), and commits the result in its rollup_state row, the same
 * atomic insert that commits its rollups: a snapshot then reads a few cells instead of every
 * unit's rollups. Without usable totals (the first refresh, another plan, a metric rebuilt in a
 * new generation) they are added up from every unit's rollups, streamed.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { accumulate, type Cells } from '../sql/rollup/contributions.js';
import { mergeCells, newCells, planHash, totalsOfRows, type TotalsRow } from '../sql/rollup/stored-cells.js';
import { accumulateSlices, mergedSlices, sliceFolds } from './metric-slices.js';
import type { RollupSlot, StoredTotals, TotalsPlan } from '../store/contract.js';
import { slotHash } from '../store/fold.js';
import { rawColumns } from './breakdowns.js';
import { rollupsAt, rollupUnitValuesQuery, type RefreshScope, type RollupsAsOf } from './rollup-sql.js';
import { loadState, type State } from './rollup-state.js';
import { Params } from './sql-parts.js';
import { candidateUnits } from './refresh-sql.js';
import { unitColumns } from './sql.js';
import { READ_SETTINGS } from './aggregate.js';

/** rollup_state.totals_plan of a refresh that kept no totals ('' is a state from before they existed). */
export const NO_TOTALS = '-';

/**
 * rollup_state.totals_plan of totals kept with every metric's slices (metric-slices.ts): a state
 * committed before them, of the same plan otherwise, adds its totals up again once.
 */
export function keptPlanHash(plan: TotalsPlan): string {
  return `slices:${planHash(plan)}`;
}

/** The cells a refresh folds the touched units into: the totals' and each metric's slices'. */
interface Folds {
  cells: Cells;
  slices: ReturnType<typeof sliceFolds>;
}

/** Rows per batch folded into the cells while streaming every unit's rows. */
const BATCH = 20_000;

/** The per-unit rows the totals are sums of: variant_key, r{k} and m{i}, d{i}, p{i}, as of `asOf` (of the units `only` selects). */
function unitRowsQuery(params: Params, experimentId: string, plan: TotalsPlan, asOf: (params: Params) => RollupsAsOf, only: string | null): string {
  const extra = rawColumns(params, plan.breakdowns)
    .map((column) => `, ${column.expression} AS ${column.alias}`)
    .join('');
  return rollupUnitValuesQuery(params, { experimentId }, unitColumns(plan.metrics), extra, asOf(params), only);
}

/** Folds the rows of `query` into the cells with `sign`, a batch at a time (a first build reads millions of units). */
async function foldRows(ch: ClickHouse, params: Params, query: string, folds: Folds, plan: TotalsPlan, sign: 1 | -1): Promise<void> {
  for await (const batch of ch.rowBatches({ query, query_params: params.values, clickhouse_settings: READ_SETTINGS }, BATCH)) {
    accumulate(folds.cells, plan, batch, sign, true);
    accumulateSlices(folds.slices, batch, sign);
  }
}

/** Folds the rows of the units `only` selects, as of `asOf`, into `cells` with `sign`; every live unit without `only`. */
async function foldUnits(
  ch: ClickHouse,
  experimentId: string,
  plan: TotalsPlan,
  folds: Folds,
  read: { asOf: (params: Params) => RollupsAsOf; only: ((params: Params) => string) | null; sign: 1 | -1 },
): Promise<void> {
  const params = new Params();
  const query = unitRowsQuery(params, experimentId, plan, read.asOf, read.only === null ? null : read.only(params));
  await foldRows(ch, params, query, folds, plan, read.sign);
}

/** What a refresh commits with its rollups: the plan's hash, the totals and each metric's slices (metric-slices.ts). */
export interface KeptTotals {
  plan: string;
  rows: TotalsRow[];
  slices: string;
}

export interface TotalsKeeper {
  /** Runs once the refresh has listed its changed units, before it writes any rollup. */
  listed(): Promise<void>;
  /** The totals to commit, once every rollup is written. */
  written(generations: ReadonlyMap<string, number>, unitsFrom: number): Promise<KeptTotals>;
}

/**
 * Keeps the totals of `plan` with a refresh. With committed totals of the same plan, every slot
 * current and no rows of a refresh that never committed, the touched units' committed rows are
 * folded out before the refresh writes (so no merge of its rows can hide them) and their rows
 * after it folded in; otherwise the totals are added up from every unit once it has written.
 */
export function keepTotals(
  ch: ClickHouse,
  scope: RefreshScope,
  input: { plan: TotalsPlan | null; state: State | null; slots: readonly RollupSlot[]; leftovers: boolean },
): TotalsKeeper {
  const { plan, state, slots } = input;
  const hash = plan === null ? NO_TOTALS : keptPlanHash(plan);
  const current = (known: State) => slots.every((slot) => known.slots.get(slot.metric_id)?.hash === slotHash(slot, scope.stoppedAt));
  const delta = plan !== null && state !== null && state.totalsPlan === hash && current(state) && !input.leftovers;
  // The units the refresh may touch: those it lists as changed, and those with new events (refresh-sql.ts).
  const candidates = (params: Params) => candidateUnits(params, scope, state !== null && state.watermark < scope.watermark && slots.length > 0);
  const folds: Folds = { cells: newCells(), slices: plan === null ? [] : sliceFolds(plan) };
  return {
    listed: async () => {
      if (!delta || plan === null || state === null) return;
      const committed = new Map([...state.slots].map(([id, slot]) => [id, slot.generation]));
      // Before the refresh writes and without leftovers (`delta`): no row is above the committed version.
      const asOf = (params: Params) => ({ ...rollupsAt(params, state.version, state.unitsFrom, committed), settled: true });
      await foldUnits(ch, scope.experimentId, plan, folds, { asOf, only: candidates, sign: -1 });
    },
    written: async (generations, unitsFrom) => {
      if (plan === null) return { plan: NO_TOTALS, rows: [], slices: '' };
      const now = new Map(slots.map((slot) => [slot.metric_id, generations.get(slot.metric_id) ?? scope.version]));
      // As of the refresh's own version, above every row written: FINAL reads each key's row as of it.
      const asOf = (params: Params) => ({ ...rollupsAt(params, scope.version, unitsFrom, now), settled: true });
      if (!delta || state === null) {
        await foldUnits(ch, scope.experimentId, plan, folds, { asOf, only: null, sign: 1 });
        return { plan: hash, rows: mergeCells([], folds.cells), slices: mergedSlices(folds.slices, null) };
      }
      // The touched units as the refresh wrote them: every one has a row per slot at its version (refresh-sql.ts).
      const own = (params: Params) => ({ ...asOf(params), ownRows: true });
      await foldUnits(ch, scope.experimentId, plan, folds, { asOf: own, only: null, sign: 1 });
      const before = state.totals === '' ? [] : (JSON.parse(state.totals) as TotalsRow[]);
      return { plan: hash, rows: mergeCells(before, folds.cells), slices: mergedSlices(folds.slices, state.slices) };
    },
  };
}

/** The experiment's maintained totals of `plan` as the last committed refresh left them. */
export async function committedTotals(ch: ClickHouse, experimentId: string, plan: TotalsPlan): Promise<StoredTotals> {
  const state = await loadState(ch, experimentId);
  if (state === null || state.totalsPlan !== keptPlanHash(plan)) throw new Error(`the rollups of experiment ${experimentId} keep no totals of this plan`);
  return storedTotals(state.totals, plan);
}

/** Stored totals (rollup_state.totals) as the general pass gives them. */
export function storedTotals(text: string, plan: TotalsPlan): StoredTotals {
  return totalsOfRows(text === '' ? [] : (JSON.parse(text) as TotalsRow[]), plan);
}

/**
 * The ClickHouse analysis store (docs/analysis.md "ClickHouse"): events drained into ClickHouse,
 * exposures mirrored there from the primary database before each snapshot (mirror.ts), every
 * aggregate one statement per experiment (aggregate.ts, breakdowns.ts), the rollups refreshed by
 * rollups.ts. A view reads the committed drain number once: every read of a snapshot then counts
 * the events of the same drains.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { committedDrain } from '../../../clickhouse/events.js';
import type { AnalysisStore, BreakdownInput, BreakdownTotals, StoreView } from '../store/contract.js';
import { aggregateInClickHouse, lateEventsInClickHouse, percentileCapInClickHouse, periodRowsInClickHouse } from './aggregate.js';
import { breakdownsInClickHouse } from './breakdowns.js';
import type { ClickHouseStoreDeps } from './deps.js';
import { historyInClickHouse } from './history.js';
import { quantileValuesInClickHouse } from './quantile-values.js';
import { mirrorExposures } from './mirror.js';
import { refreshInClickHouse, type RefreshQueue } from './rollups.js';
import { committedTotals } from './totals.js';
import { slicesOf } from './metric-slices.js';
import { loadState, type State } from './rollup-state.js';
import { periodCellOf } from '../store/fold.js';
import { sequencesInClickHouse } from './sequences.js';

/**
 * A metric's slices from the rollups: those its last committed refresh kept with the totals
 * (metric-slices.ts), or null when it kept none of this metric (a pass then adds them up).
 * `state` reads the committed state once per snapshot: its slices are read after its refresh.
 */
async function keptSlices(state: () => Promise<State | null>, input: BreakdownInput): Promise<BreakdownTotals[] | null> {
  if (input.source !== 'rollups' || input.primary === null || input.breakdowns.length === 0) return null;
  const committed = await state();
  return committed === null ? null : slicesOf(committed.slices, input.breakdowns, input.primary);
}

function clickHouseView(deps: ClickHouseStoreDeps, ch: ClickHouse, queue: RefreshQueue, drained: number): StoreView {
  const committed = new Map<string, Promise<State | null>>();
  const state = (experimentId: string) => {
    const loaded = committed.get(experimentId) ?? loadState(ch, experimentId);
    committed.set(experimentId, loaded);
    return loaded;
  };
  return {
    refresh: (row, slots, options) =>
      refreshInClickHouse(deps, ch, queue, row, slots, {
        watermark: drained,
        rebuild: options.rebuild,
        beforeCommit: options.beforeCommit,
        comparedBySetAtMost: options.comparedBySetAtMost,
        plan: options.plan,
      }),
    aggregate: (input, topLimit = () => 0) => aggregateInClickHouse(ch, { ...input, drained }, topLimit),
    percentileCap: (scope, metric, quantile) => percentileCapInClickHouse(ch, { ...scope, drained }, metric, quantile),
    lateEvents: (scope, metrics) => lateEventsInClickHouse(ch, { ...scope, drained }, metrics),
    quantileValues: (scope, metric, level) => quantileValuesInClickHouse(ch, { ...scope, drained }, metric, level),
    breakdowns: async (input) => (await keptSlices(() => state(input.experimentId), input)) ?? breakdownsInClickHouse(ch, { ...input, drained }),
    periodCells: async (scope, spec, starts) => (await periodRowsInClickHouse(ch, { ...scope, drained }, spec, starts)).map(periodCellOf),
    maintainedTotals: (experimentId, plan) => committedTotals(ch, experimentId, plan),
    sequences: (input) => sequencesInClickHouse(ch, { ...input, drained }),
  };
}

export function clickHouseAnalysisStore(deps: ClickHouseStoreDeps, ch: ClickHouse): AnalysisStore {
  const queue: RefreshQueue = new Map();
  return {
    name: 'clickhouse',
    // A refresh reads the new events and the touched units' rollups, and the snapshot the
    // maintained totals (docs/analysis.md "Incremental analysis in ClickHouse").
    defaultMode: 'incremental',
    // One statement per experiment: ClickHouse parallelises it itself.
    chunkUnits: null,
    maintainsTotals: true,
    prepare: async (experimentId) => {
      await mirrorExposures(deps, ch, experimentId);
    },
    view: async () => clickHouseView(deps, ch, queue, await committedDrain(deps.db)),
    historyTotals: (input) => historyInClickHouse(deps, ch, input),
    // First contacts live in the primary database and are not mirrored.
    holdoutTotals: async () => null,
  };
}

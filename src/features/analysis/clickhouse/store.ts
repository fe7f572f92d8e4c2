/**
 * The ClickHouse analysis store (docs/analysis.md "ClickHouse"): events drained into ClickHouse,
 * exposures mirrored there from the primary database before each snapshot (mirror.ts), every
 * aggregate one statement per experiment (aggregate.ts, breakdowns.ts), the rollups refreshed by
 * rollups.ts. A view reads the committed drain number once: every read of a snapshot then counts
 * the events of the same drains.
 */
import type { ClickHouse } from '../../../clickhouse/client.js';
import { committedDrain } from '../../../clickhouse/events.js';
import type { AnalysisStore, StoreView } from '../store/contract.js';
import { aggregateInClickHouse, lateEventsInClickHouse, percentileCapInClickHouse, periodRowsInClickHouse } from './aggregate.js';
import { breakdownsInClickHouse } from './breakdowns.js';
import type { ClickHouseStoreDeps } from './deps.js';
import { historyInClickHouse } from './history.js';
import { quantileValuesInClickHouse } from './quantile-values.js';
import { mirrorExposures } from './mirror.js';
import { refreshInClickHouse, type RefreshQueue } from './rollups.js';
import { periodCellOf } from '../store/fold.js';
import { sequencesInClickHouse } from './sequences.js';

function clickHouseView(deps: ClickHouseStoreDeps, ch: ClickHouse, queue: RefreshQueue, drained: number): StoreView {
  return {
    refresh: (row, slots, options) =>
      refreshInClickHouse(deps, ch, queue, row, slots, { watermark: drained, rebuild: options.rebuild, beforeCommit: options.beforeCommit }),
    aggregate: (input, topLimit = () => 0) => aggregateInClickHouse(ch, { ...input, drained }, topLimit),
    percentileCap: (scope, metric, quantile) => percentileCapInClickHouse(ch, { ...scope, drained }, metric, quantile),
    lateEvents: (scope, metrics) => lateEventsInClickHouse(ch, { ...scope, drained }, metrics),
    quantileValues: (scope, metric, level) => quantileValuesInClickHouse(ch, { ...scope, drained }, metric, level),
    breakdowns: (input) => breakdownsInClickHouse(ch, { ...input, drained }),
    periodCells: async (scope, spec, starts) => (await periodRowsInClickHouse(ch, { ...scope, drained }, spec, starts)).map(periodCellOf),
    maintainedTotals: () => Promise.reject(new Error('the ClickHouse store keeps no maintained totals: it aggregates every unit’s rollups')),
    sequences: (input) => sequencesInClickHouse(ch, { ...input, drained }),
  };
}

export function clickHouseAnalysisStore(deps: ClickHouseStoreDeps, ch: ClickHouse): AnalysisStore {
  const queue: RefreshQueue = new Map();
  return {
    name: 'clickhouse',
    // Incremental on request only: exact, but measured slower than the full computation there
    // (docs/analysis.md "Incremental analysis in ClickHouse").
    defaultMode: 'full',
    // One statement per experiment: ClickHouse parallelises it itself.
    chunkUnits: null,
    maintainsTotals: false,
    prepare: async (experimentId) => {
      await mirrorExposures(deps, ch, experimentId);
    },
    view: async () => clickHouseView(deps, ch, queue, await committedDrain(deps.db)),
    historyTotals: (input) => historyInClickHouse(deps, ch, input),
    // First contacts live in the primary database and are not mirrored.
    holdoutTotals: async () => null,
  };
}

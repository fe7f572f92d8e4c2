/**
 * The SQL analysis store: events, exposures and rollups in the primary database (SQLite or
 * PostgreSQL), aggregated there (aggregate.ts and its neighbours), the rollups refreshed by
 * rollup/refresh.ts and per-variant totals maintained with them. The statements read what is
 * committed when they run; the dialect's choices are dialect-settings.ts.
 */
import type { AnalysisStore, StoreView } from '../store/contract.js';
import { aggregateByVariant } from './aggregate.js';
import { aggregateBreakdowns } from './breakdowns.js';
import type { SqlStoreDeps } from './deps.js';
import { analysisSettingsOf } from './dialect-settings.js';
import { historyTotals } from './history-totals.js';
import { holdoutTotals } from './holdout-totals.js';
import { countLateEvents } from './late-events.js';
import { percentileCap } from './percentile-cap.js';
import { quantileValues } from './quantile-values.js';
import { periodCells } from './period-cells.js';
import { refreshRollups } from './rollup/refresh.js';
import { keptSliceTotals } from './rollup/kept-slices.js';
import { readTotals } from './rollup/totals.js';
import { sequencesInSql } from './sequences.js';

function sqlView(deps: SqlStoreDeps): StoreView {
  const { db, seam, reads } = deps;
  return {
    refresh: (row, slots, options) => refreshRollups(deps, row, slots, options),
    aggregate: (input, topLimit) => aggregateByVariant(db, seam, reads, input, topLimit),
    percentileCap: (scope, metric, quantile) => percentileCap(db, seam, reads, scope, metric, quantile),
    lateEvents: (scope, metrics) => countLateEvents(db, scope, metrics),
    quantileValues: (scope, metric, level) => quantileValues(db, seam, reads, scope, metric, level),
    // A guardrail's or secondary metric's slices kept with the totals, else a pass over every unit.
    breakdowns: async (input) => (await keptSliceTotals(db, input)) ?? aggregateBreakdowns(db, seam, reads, input),
    periodCells: (scope, spec, starts) => periodCells(deps, scope, spec, starts),
    maintainedTotals: (experimentId, plan) => readTotals(db, experimentId, plan),
    sequences: (input) => sequencesInSql(deps, input),
  };
}

export function sqlAnalysisStore(deps: SqlStoreDeps): AnalysisStore {
  const settings = analysisSettingsOf(deps.seam);
  const view = sqlView(deps);
  return {
    name: deps.seam.name,
    defaultMode: settings.defaultMode,
    chunkUnits: settings.chunkUnits,
    maintainsTotals: true,
    prepare: async () => undefined,
    view: async () => view,
    historyTotals: (input) => historyTotals(deps.db, deps.seam, deps.reads, input),
    holdoutTotals: (input) => holdoutTotals(deps.db, deps.seam, deps.reads, input),
  };
}

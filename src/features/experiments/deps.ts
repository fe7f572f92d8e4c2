import type { AppContext } from '../../context.js';
import type { LifecycleListener } from './lifecycle.js';
import type { HistoryBaselineLookup } from './planning.js';

/**
 * What the experiments slice needs: the database, the dialect seam, the clock and the change feed
 * (assignment caches drop changed definitions), and who hears of starts and stops (the alerts
 * slice, given by the root). Other slices read it through read.ts.
 */
export type ExperimentsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes'> & {
  lifecycle?: LifecycleListener | undefined;
  /** The primary metric's baseline from history for the underpowered warning (the planning slice, given by the root). */
  historyBaselines?: HistoryBaselineLookup | undefined;
};

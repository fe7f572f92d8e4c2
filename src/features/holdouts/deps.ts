import type { AppContext } from '../../context.js';

/**
 * What the holdouts slice needs: the database and its seam (row locks), the clock, the change feed
 * (assignment's caches) and the analysis store (its snapshots' sums).
 */
export type HoldoutsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes' | 'analysisStore'>;

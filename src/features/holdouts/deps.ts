import type { AppContext } from '../../context.js';

/** What the holdouts slice needs: the database and its seam (row locks), the clock and the change feed (assignment's caches). */
export type HoldoutsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes'>;

import type { AppContext } from '../../context.js';

/**
 * What the assignment slice needs: the database, the dialect seam, the clock, the change feed
 * (its caches drop what changed), the cache settings of the configuration, the cache counters and
 * where first assignments are written (`writes`) and where a cache miss reads the stored one (`sideReads`).
 * It reads experiments and segments through their read.ts.
 */
export type AssignmentDeps = Pick<AppContext, 'db' | 'sideReads' | 'seam' | 'clock' | 'changes' | 'config' | 'metrics' | 'writes'>;

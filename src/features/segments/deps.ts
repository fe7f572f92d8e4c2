import type { AppContext } from '../../context.js';

/** What the segments slice needs: the database, the dialect seam, the clock and the change feed (assignment caches drop changed rules). Other slices read it through read.ts. */
export type SegmentsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes'>;

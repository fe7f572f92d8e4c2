import type { AppContext } from '../../context.js';

/** What the mutex-groups slice needs: the database, the dialect seam (unique keys) and the clock. Other slices read it through read.ts. */
export type MutexGroupsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

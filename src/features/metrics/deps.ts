import type { AppContext } from '../../context.js';

/**
 * What the metrics slice needs: the database, the dialect seam (unique keys) and the clock; the
 * secret box and config to try a fact-table metric's filter on its source. Other slices read it through read.ts.
 */
export type MetricsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets' | 'config'>;

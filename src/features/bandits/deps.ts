import type { AppContext } from '../../context.js';

/** What the bandit reweighting needs: the analysis's reads (period totals) and the experiments slice's write (weights, audit, change feed). */
export type BanditsDeps = Pick<AppContext, 'db' | 'seam' | 'reads' | 'analysisStore' | 'stats' | 'clock' | 'metrics' | 'changes' | 'writes' | 'background'>;

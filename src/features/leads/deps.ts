import type { AppContext } from '../../context.js';

export type LeadsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

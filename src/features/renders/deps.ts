import type { AppContext } from '../../context.js';

/** Reads template versions through templates/read.ts; a render is a job (enqueue, jobs). */
export type RendersDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'enqueue' | 'jobs'>;

import type { AppContext } from '../../context.js';

/** A verified callback is queued (enqueue) and mirrored onto its lead by a job (jobs). */
export type TaskToolDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets' | 'logger' | 'enqueue' | 'jobs'>;

import type { AppContext } from '../../context.js';

/** Users, their one-time links and their sessions; audit through audit/recorder.ts. */
export type PeopleDeps = Pick<AppContext, 'db' | 'clock' | 'config' | 'seam'>;

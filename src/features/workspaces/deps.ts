import type { AppContext } from '../../context.js';

/** The webhook secret of a new workspace is sealed with the secret box. */
export type WorkspacesDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets'>;

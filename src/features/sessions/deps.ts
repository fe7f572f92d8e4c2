import type { AppContext } from '../../context.js';

/** Signs in with an API key (authenticator); shows the workspace through workspaces/read.ts. */
export type SessionsDeps = Pick<AppContext, 'db' | 'clock' | 'authenticator'>;

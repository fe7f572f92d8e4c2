import type { AppContext } from '../../context.js';
import type { PeopleSessions } from '../people/sessions.js';

/** Signs in with an API key (authenticator) or as a person (people); shows the workspace through workspaces/read.ts. */
export type SessionsDeps = Pick<AppContext, 'db' | 'clock' | 'authenticator' | 'config'> & { people: PeopleSessions };

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { SessionAuthenticator } from '../../http/auth.js';
import { sessionAuthenticator } from './authenticate.js';
import { sessionRoutes } from './routes.js';

/** Signs in with an API key (authenticator); shows the workspace through workspaces/read.ts. */
export type SessionsDeps = Pick<AppContext, 'db' | 'clock' | 'authenticator'>;

export interface SessionsSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Lets the admin UI's session cookie stand in for a bearer key (installed by http/auth.ts). */
  authenticator: SessionAuthenticator;
}

export function createSessions(deps: SessionsDeps): SessionsSlice {
  return { routes: sessionRoutes(deps), authenticator: sessionAuthenticator(deps) };
}

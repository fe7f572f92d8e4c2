import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SessionAuthenticator } from '../../http/auth.js';
import { sessionAuthenticator } from './authenticate.js';
import { sessionRoutes } from './routes.js';
import type { SessionsDeps } from './deps.js';

export interface SessionsSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Lets the admin UI's session cookie stand in for a bearer key (installed by http/auth.ts). */
  authenticator: SessionAuthenticator;
}

export function createSessions(deps: SessionsDeps): SessionsSlice {
  return { routes: sessionRoutes(deps), authenticator: sessionAuthenticator(deps) };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { PeopleDeps } from './deps.js';
import { OidcClient } from './oidc.js';
import { oidcRoutes } from './oidc-routes.js';
import { peopleRoutes } from './routes.js';
import { lookupUserSession, principalOfUserSession, signInWithPassword, signOutUser, userSessionView, type PeopleSessions } from './sessions.js';

export interface PeopleSlice {
  routes: FastifyPluginAsyncTypebox;
  /** What the sessions slice asks of people: password sign-in, and the sessions of persons. */
  sessions: PeopleSessions;
}

export type { PeopleSessions };

export function createPeople(deps: PeopleDeps & Pick<AppContext, 'secrets'>): PeopleSlice {
  const oidc = deps.config.oidc ? new OidcClient(deps.config.oidc) : null;
  const api = peopleRoutes(deps);
  return {
    routes: oidc
      ? async (app) => {
          await app.register(api);
          await app.register(oidcRoutes(deps, oidc));
        }
      : api,
    sessions: {
      signIn: (input, ip) => signInWithPassword(deps, input, ip),
      lookup: (token) => lookupUserSession(deps, token),
      view: (session) => userSessionView(deps, session),
      signOut: (session, everywhere) => signOutUser(deps, session, everywhere),
      principalOf: principalOfUserSession,
      ssoEnabled: oidc !== null,
    },
  };
}

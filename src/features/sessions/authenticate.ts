import type { FastifyRequest } from 'fastify';
import type { SessionAuthenticator } from '../../http/auth.js';
import { problems } from '../../http/problems.js';
import { constantTimeEqual } from '../../lib/secrets.js';
import type { Principal } from '../api-keys/authenticator.js';
import { refuseUnlessRoleAllows } from '../people/roles.js';
import type { SessionsDeps } from './deps.js';
import { sessionTokenOf } from './cookie.js';
import { lookupAnySession } from './service.js';

export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser's cookie is sent with any request to this host, also ones another site's page
 * causes; the CSRF token is known only to our own page, so requiring it on every
 * state-changing request means only our page can change anything through a session.
 */
export function requireCsrf(request: FastifyRequest, session: { csrf_token: string }): void {
  const given = request.headers[CSRF_HEADER];
  if (typeof given !== 'string' || !constantTimeEqual(given, session.csrf_token)) {
    throw problems.forbidden(`a ${request.method} through an admin UI session needs the session's CSRF token in the X-CSRF-Token header`);
  }
}

/**
 * Lets the admin UI's session cookie stand in for a bearer key (only when no Authorization header
 * is sent): a key's session acts as its key, a person's session as the person, bounded by their
 * role (people/roles.ts) on every route.
 */
export function sessionAuthenticator(ctx: SessionsDeps): SessionAuthenticator {
  return {
    async authenticate(request): Promise<Principal | null> {
      const token = sessionTokenOf(request);
      if (!token) return null;
      const found = await lookupAnySession(ctx, token);
      if (found.state === 'none') throw problems.unauthorized('the admin UI session is unknown or was signed out; sign in again');
      if (found.state === 'expired') throw problems.unauthorized('the admin UI session has expired; sign in again');
      if (found.state === 'revoked')
        throw problems.unauthorized('the key or the account this session signed in with has been revoked or disabled; sign in again');
      if (!SAFE_METHODS.has(request.method)) requireCsrf(request, found.session);
      const principal = found.principal;
      refuseUnlessRoleAllows(principal.user?.role, request.method, request.routeOptions.url);
      return principal;
    },
  };
}

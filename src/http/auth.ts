import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeyAuthenticator, Principal } from './principal.js';
import { problems } from './problems.js';

/** Who may call a route: anyone, any valid key (client keys included), or server keys only. */
export type AuthScope = 'public' | 'client' | 'server';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthScope;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Lets a credential other than a bearer key stand in when no Authorization header is sent. */
export interface SessionAuthenticator {
  /** The session's principal; null when the request carries no session; throws for a bad one. */
  authenticate(request: FastifyRequest): Promise<Principal | null>;
}

export function installAuth(app: FastifyInstance, authenticator: KeyAuthenticator, sessions?: SessionAuthenticator): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    // Secure by default: a route that forgets to declare its scope needs a server key.
    const declared = route.config?.auth;
    const scope: AuthScope = declared ?? (route.url.startsWith('/docs') ? 'public' : 'server');
    route.config = { ...route.config, auth: scope };
  });

  // A callback hook rather than an async one: with the key's lookup cached (nearly every SDK
  // call) the request passes without a promise or a trip through the microtask queue.
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.is404) return done();
    const scope = request.routeOptions.config.auth ?? 'server';
    if (scope === 'public') return done();
    const authorization = request.headers.authorization;
    let cached: Principal | undefined;
    try {
      cached = authorization === undefined ? undefined : authenticator.authenticateCached(authorization, request.raw.socket);
      if (cached) admit(request, scope, cached);
    } catch (error) {
      return done(error as Error);
    }
    if (cached) return done();
    // The admin UI's session cookie counts only when no Authorization header is sent, so an
    // explicit bearer key always decides, and API callers never depend on cookies.
    const fromSession = authorization === undefined && sessions ? sessions.authenticate(request) : Promise.resolve(null);
    fromSession.then(async (principal) => admit(request, scope, principal ?? (await authenticator.authenticate(authorization)))).then(() => done(), done);
  });
}

/** Sets the request's principal, or throws 403 for a client key on a server-key route. */
function admit(request: FastifyRequest, scope: AuthScope, principal: Principal): void {
  if (scope === 'server' && principal.kind !== 'server') {
    throw problems.forbidden('this operation needs a server key; client keys may only assign, track events and log exposures');
  }
  request.principal = principal;
}

/** The authenticated caller; routes with a key scope always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`route ${request.routeOptions.url} has no authenticated principal`);
  return request.principal;
}

/** The caller as the audit log records it: the workspace acted in and the key that acted. */
export function actorOf(request: FastifyRequest): { workspaceId: string; actorId: string } {
  const principal = principalOf(request);
  return { workspaceId: principal.workspaceId, actorId: principal.keyId };
}

import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { Config } from '../config.js';
import { problems } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: @fastify/cors adds no headers to this route's answers. */
    cors?: false;
  }
}

/** The methods a browser SDK uses; also the Access-Control-Allow-Methods of every preflight. */
const CLIENT_METHODS = ['GET', 'POST'] as const;

/**
 * Whether an OPTIONS request is a preflight for a route a client key may call. Only those are
 * answered by @fastify/cors; a preflight for a server-only or unknown path, or for a method the
 * route does not take, gets the ordinary 404/405 problem with no CORS header, so the browser
 * refuses the real request (the README promises server-only routes never answer cross-origin).
 */
function preflightTarget(clientRoutes: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>, request: FastifyRequest): 'client' | 'other' | 'not-a-preflight' {
  const path = request.url.split('?')[0] ?? '/';
  const asked = request.headers['access-control-request-method'];
  const methods = typeof asked === 'string' ? [asked.trim().toUpperCase()] : CLIENT_METHODS;
  const isClientRoute = methods.some((method) => (CLIENT_METHODS as readonly string[]).includes(method) && clientRoutes.find(method as HTTPMethod, path));
  if (!isClientRoute) return 'other';
  return request.headers.origin === undefined || typeof asked !== 'string' ? 'not-a-preflight' : 'client';
}

function routeOfOptions(clientRoutes: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (request.method !== 'OPTIONS') return done();
    const target = preflightTarget(clientRoutes, request);
    if (target === 'client') return done();
    if (target === 'not-a-preflight') {
      return done(problems.malformedRequest('an OPTIONS request here is a CORS preflight: send Origin and Access-Control-Request-Method'));
    }
    // Answered as any method the path does not take (404/405 problem), before @fastify/cors sees it.
    void reply.callNotFound();
  };
}

/**
 * CORS for browser SDKs: a page on the customer's own origin assigns and tracks with a client
 * key. Only the routes a client key may call answer with CORS headers; every other route is
 * marked `cors: false`, so a page can read nothing else (a server key belongs on a server, and
 * the admin UI is same-origin). No route allows credentials, so cookies never cross origins.
 * Registered before authentication, so a preflight (which carries no key) is answered here.
 */
export async function installCors(app: FastifyInstance, origins: Config['corsOrigins']): Promise<void> {
  if (origins === false) return;
  const clientRoutes = FindMyWay();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // The plugin's own preflight route keeps CORS; a route without a declared scope needs a server key.
    if (methods.includes('OPTIONS')) return;
    if (route.config?.auth === 'client') {
      for (const method of methods) if (method !== 'HEAD') clientRoutes.on(method as HTTPMethod, route.url, () => undefined);
      return;
    }
    route.config = { ...route.config, cors: false };
  });
  // Before the plugin's hook, so a preflight it must not answer never reaches it.
  app.addHook('onRequest', routeOfOptions(clientRoutes));
  await app.register(cors, {
    origin: origins,
    methods: [...CLIENT_METHODS],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id'],
    exposedHeaders: ['retry-after', 'x-request-id'],
    // Browsers cache a preflight this many seconds (Chromium caps it at 2 hours).
    maxAge: 7200,
  });
}

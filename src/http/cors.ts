import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: @fastify/cors adds no headers to this route's answers. */
    cors?: false;
  }
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
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // The plugin's own preflight route keeps CORS; a route without a declared scope needs a server key.
    if (methods.includes('OPTIONS') || route.config?.auth === 'client') return;
    route.config = { ...route.config, cors: false };
  });
  await app.register(cors, {
    origin: origins,
    methods: ['GET', 'POST'],
    allowedHeaders: ['authorization', 'content-type', 'x-request-id'],
    exposedHeaders: ['retry-after', 'x-request-id'],
    // Browsers cache a preflight this many seconds (Chromium caps it at 2 hours).
    maxAge: 7200,
  });
}

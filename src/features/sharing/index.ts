import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SharingDeps } from './deps.js';
import { sharingRoutes } from './routes.js';

export interface SharingSlice {
  routes: FastifyPluginAsyncTypebox;
}

/** Share links (read-only, expiring, revocable links to one experiment's results) and result exports. */
export function createSharing(deps: SharingDeps): SharingSlice {
  return { routes: sharingRoutes(deps) };
}

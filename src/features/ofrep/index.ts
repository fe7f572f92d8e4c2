import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ofrepRoutes } from './routes.js';
import type { OfrepDeps } from './deps.js';

export interface OfrepSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createOfrep(deps: OfrepDeps): OfrepSlice {
  return { routes: ofrepRoutes(deps) };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { HoldoutsDeps } from './deps.js';
import { holdoutRoutes } from './routes.js';

export interface HoldoutsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createHoldouts(deps: HoldoutsDeps): HoldoutsSlice {
  return { routes: holdoutRoutes(deps) };
}

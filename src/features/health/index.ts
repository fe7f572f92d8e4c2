import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { healthRoutes } from './routes.js';
import type { HealthDeps } from './deps.js';

export interface HealthSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createHealth(deps: HealthDeps): HealthSlice {
  return { routes: healthRoutes(deps) };
}

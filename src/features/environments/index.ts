import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { environmentRoutes } from './routes.js';
import type { EnvironmentsDeps } from './deps.js';

export interface EnvironmentsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createEnvironments(deps: EnvironmentsDeps): EnvironmentsSlice {
  return { routes: environmentRoutes(deps) };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PlanningDeps } from './deps.js';
import { planningRoutes } from './routes.js';

export type { PlanningDeps } from './deps.js';

export interface PlanningSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createPlanning(deps: PlanningDeps): PlanningSlice {
  return { routes: planningRoutes(deps) };
}

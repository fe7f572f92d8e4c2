import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { healthRoutes } from './routes.js';

/** Liveness, and readiness asks the database and the event buffer. */
export type HealthDeps = Pick<AppContext, 'config' | 'db' | 'buffer'>;

export interface HealthSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createHealth(deps: HealthDeps): HealthSlice {
  return { routes: healthRoutes(deps) };
}

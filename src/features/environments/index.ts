import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { environmentRoutes } from './routes.js';

/** What the environments slice needs: the database, the dialect seam (unique keys) and the clock. Other slices read it through read.ts. */
export type EnvironmentsDeps = Pick<AppContext, 'db' | 'seam' | 'clock'>;

export interface EnvironmentsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createEnvironments(deps: EnvironmentsDeps): EnvironmentsSlice {
  return { routes: environmentRoutes(deps) };
}

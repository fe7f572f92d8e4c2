import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { experimentRoutes } from './routes.js';

/** What the experiments slice needs: the database, the dialect seam, the clock and the change feed (assignment caches drop changed definitions). Other slices read it through read.ts. */
export type ExperimentsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes'>;

export interface ExperimentsSlice {
  routes: FastifyPluginAsyncTypebox;
}

export function createExperiments(deps: ExperimentsDeps): ExperimentsSlice {
  return { routes: experimentRoutes(deps) };
}

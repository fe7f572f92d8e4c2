import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/database.js';
import type { AutoStopRequest, LifecycleListener } from './lifecycle.js';
import { experimentRoutes } from './routes.js';
import type { Experiment } from './schemas.js';
import { stopAutomatically } from './service.js';

/**
 * What the experiments slice needs: the database, the dialect seam, the clock and the change feed
 * (assignment caches drop changed definitions), and who hears of starts and stops (the alerts
 * slice, given by the root). Other slices read it through read.ts.
 */
export type ExperimentsDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'changes'> & { lifecycle?: LifecycleListener | undefined };

export interface ExperimentsSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Stops a running experiment for an auto-stop condition, in the caller's transaction. */
  stopAutomatically(trx: Tx, request: AutoStopRequest): Promise<{ experiment: Experiment; afterCommit: () => void } | null>;
}

export function createExperiments(deps: ExperimentsDeps): ExperimentsSlice {
  return { routes: experimentRoutes(deps), stopAutomatically: (trx, request) => stopAutomatically(deps, trx, request) };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Tx } from '../../db/database.js';
import type { AutoStopRequest } from './lifecycle.js';
import { experimentRoutes } from './routes.js';
import type { Experiment } from './schemas.js';
import { stopAutomatically } from './service.js';
import type { ExperimentsDeps } from './deps.js';

export interface ExperimentsSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Stops a running experiment for an auto-stop condition, in the caller's transaction. */
  stopAutomatically(trx: Tx, request: AutoStopRequest): Promise<{ experiment: Experiment; afterCommit: () => void } | null>;
}

export function createExperiments(deps: ExperimentsDeps): ExperimentsSlice {
  return { routes: experimentRoutes(deps), stopAutomatically: (trx, request) => stopAutomatically(deps, trx, request) };
}

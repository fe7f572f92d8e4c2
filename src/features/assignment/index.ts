import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Assigner } from './assigner.js';
import { assignmentRoutes } from './routes.js';
import type { AssignmentDeps } from './deps.js';

export interface AssignmentSlice {
  routes: FastifyPluginAsyncTypebox;
  /** The one Assigner of the process (its caches are shared by every route that assigns, OFREP's too). */
  assigner: Assigner;
}

export function createAssignment(deps: AssignmentDeps): AssignmentSlice {
  const assigner = new Assigner(deps);
  return { routes: assignmentRoutes(deps, assigner), assigner };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { registerTemplateJobs } from './job.js';
import { renderRoutes } from './routes.js';

/** Reads template versions through templates/read.ts; a render is a job (enqueue, jobs). */
export type RendersDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'enqueue' | 'jobs'>;

export interface RendersSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Registers the render job and its failure hook with the job registry (jobs/handlers.ts). */
  registerJobs(): void;
}

export function createRenders(deps: RendersDeps): RendersSlice {
  return { routes: renderRoutes(deps), registerJobs: () => registerTemplateJobs(deps) };
}

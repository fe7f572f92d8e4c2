import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerTemplateJobs } from './job.js';
import { renderRoutes } from './routes.js';
import type { RendersDeps } from './deps.js';

export interface RendersSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Registers the render job and its failure hook with the job registry (app/jobs.ts). */
  registerJobs(): void;
}

export function createRenders(deps: RendersDeps): RendersSlice {
  return { routes: renderRoutes(deps), registerJobs: () => registerTemplateJobs(deps) };
}

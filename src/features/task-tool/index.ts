import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MIRROR_TASK_STATUS_JOB } from './callback.js';
import { runMirrorTaskStatusJob } from './mirror-job.js';
import { taskToolRoutes } from './routes.js';
import type { TaskToolDeps } from './deps.js';

export interface TaskToolSlice {
  routes: FastifyPluginAsyncTypebox;
  /** Registers the job that mirrors a callback onto its lead (app/jobs.ts). */
  registerJobs(): void;
}

export function createTaskTool(deps: TaskToolDeps): TaskToolSlice {
  return {
    routes: taskToolRoutes(deps),
    registerJobs: () => deps.jobs.register(MIRROR_TASK_STATUS_JOB, (payload, context) => runMirrorTaskStatusJob(deps, payload, context)),
  };
}

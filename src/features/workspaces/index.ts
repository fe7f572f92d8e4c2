import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { workspaceRoutes } from './routes.js';
import { createWorkspace } from './service.js';
import type { WorkspacesDeps } from './deps.js';

export interface WorkspacesSlice {
  routes: FastifyPluginAsyncTypebox;
  /** The bootstrap (CLI `workspaces create`, tests): workspace, production environment, server key, webhook secret. */
  createWorkspace(name: string): ReturnType<typeof createWorkspace>;
}

export function createWorkspaces(deps: WorkspacesDeps): WorkspacesSlice {
  return {
    routes: workspaceRoutes(deps),
    createWorkspace: (name) => createWorkspace(deps, name),
  };
}

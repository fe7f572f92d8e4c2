import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { workspaceRoutes } from './routes.js';
import { createWorkspace } from './service.js';

/** The webhook secret of a new workspace is sealed with the secret box. */
export type WorkspacesDeps = Pick<AppContext, 'db' | 'seam' | 'clock' | 'secrets'>;

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

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LRUCache } from 'lru-cache';
import { principalOf } from '../../http/auth.js';
import { problems } from '../../http/problems.js';
import { routeOptionsFor } from '../../http/route-options.js';
import type { WorkspacesDeps } from './deps.js';
import { WorkspaceSchema } from './schemas.js';
import { findWorkspace, toWorkspace } from './store.js';

const route = routeOptionsFor('workspaces');

export function workspaceRoutes(ctx: WorkspacesDeps): FastifyPluginAsyncTypebox {
  // A workspace never changes once created (nothing renames or deletes one), so each is read
  // from the database once per process: an SDK's or the admin UI's frequent "who am I" costs no
  // query. Bounded, for a deployment hosting very many tenants.
  const workspaces = new LRUCache<string, ReturnType<typeof toWorkspace>>({ max: 10_000 });
  async function loadWorkspace(workspaceId: string) {
    const row = await findWorkspace(ctx.db, workspaceId);
    if (!row) throw problems.notFound('the workspace of this key no longer exists');
    const workspace = toWorkspace(row);
    workspaces.set(workspaceId, workspace);
    return workspace;
  }
  return async (app) => {
    app.get(
      '/v1/workspaces/current',
      route('getCurrentWorkspace', {
        description: 'The workspace of the calling key.',
        response: { 200: WorkspaceSchema },
      }),
      // Not async: a cached workspace is sent without a promise.
      (request) => {
        const { workspaceId } = principalOf(request);
        return workspaces.get(workspaceId) ?? loadWorkspace(workspaceId);
      },
    );
  };
}

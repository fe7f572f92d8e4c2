import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { problems } from '../../http/problems.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { WorkspaceSchema } from './schemas.js';
import { findWorkspace, toWorkspace } from './store.js';

const route = routeOptionsFor('workspaces');

export function workspaceRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/workspaces/current',
      route('getCurrentWorkspace', {
        description: 'The workspace of the calling key.',
        response: { 200: WorkspaceSchema },
      }),
      async (request) => {
        const { workspaceId } = principalOf(request);
        const row = await findWorkspace(ctx.db, workspaceId);
        if (!row) throw problems.notFound('the workspace of this key no longer exists');
        return toWorkspace(row);
      },
    );
  };
}

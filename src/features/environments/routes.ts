import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { EnvironmentsDeps } from './deps.js';
import { EnvironmentInput, EnvironmentList, EnvironmentListQuery, EnvironmentSchema } from './schemas.js';
import { createEnvironment } from './service.js';
import { listEnvironments } from './store.js';

const route = routeOptionsFor('environments');

export function environmentRoutes(ctx: EnvironmentsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/environments', route('listEnvironments', { querystring: EnvironmentListQuery, response: { 200: EnvironmentList } }), async (request) =>
      listEnvironments(ctx.db, principalOf(request).workspaceId, request.query),
    );

    app.post(
      '/v1/environments',
      route('createEnvironment', {
        body: EnvironmentInput,
        response: { 201: EnvironmentSchema, 409: problemDoc('the slug is taken in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        const environment = await createEnvironment(ctx, principal.workspaceId, principal.keyId, request.body);
        return reply.code(201).send(environment);
      },
    );
  };
}

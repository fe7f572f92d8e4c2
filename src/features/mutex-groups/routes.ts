import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { problems } from '../../http/problems.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { problemDoc } from '../../http/schemas.js';
import type { MutexGroupsDeps } from './deps.js';
import { MutexGroupInput, MutexGroupList, MutexGroupListQuery, MutexGroupParams, MutexGroupSchema } from './schemas.js';
import { createMutexGroup } from './service.js';
import { findMutexGroup, listMutexGroups } from './read.js';

const route = routeOptionsFor('mutex-groups');

export function mutexGroupRoutes(ctx: MutexGroupsDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/mutex-groups', route('listMutexGroups', { querystring: MutexGroupListQuery, response: { 200: MutexGroupList } }), async (request) =>
      listMutexGroups(ctx.db, principalOf(request).workspaceId, request.query),
    );
    app.post(
      '/v1/mutex-groups',
      route('createMutexGroup', { body: MutexGroupInput, response: { 201: MutexGroupSchema, 409: problemDoc('the key is taken') } }),
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createMutexGroup(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );
    app.get('/v1/mutex-groups/:id', route('getMutexGroup', { params: MutexGroupParams, response: { 200: MutexGroupSchema } }), async (request) => {
      const group = await findMutexGroup(ctx.db, principalOf(request).workspaceId, request.params.id);
      if (!group) throw problems.notFound(`no mutex group with id ${request.params.id}`);
      return group;
    });
  };
}

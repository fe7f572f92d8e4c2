import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { routeOptionsFor } from '../../http/route-options.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import type { ApiKeysDeps } from './deps.js';
import { ApiKeyInput, ApiKeyList, ApiKeyListQuery, ApiKeyParams, ApiKeyWithSecretSchema } from './schemas.js';
import { createApiKey, revokeApiKey } from './service.js';
import { listApiKeys } from './store.js';

const route = routeOptionsFor('api-keys');

export function apiKeyRoutes(ctx: ApiKeysDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/v1/api-keys', route('listApiKeys', { querystring: ApiKeyListQuery, response: { 200: ApiKeyList } }), async (request) =>
      listApiKeys(ctx.db, principalOf(request).workspaceId, request.query, (id) => ctx.authenticator.pendingUsage(id)),
    );

    app.post('/v1/api-keys', route('createApiKey', { body: ApiKeyInput, response: { 201: ApiKeyWithSecretSchema } }), async (request, reply) => {
      const principal = principalOf(request);
      return reply.code(201).send(await createApiKey(ctx, principal.workspaceId, principal.keyId, request.body));
    });

    app.delete(
      '/v1/api-keys/:id',
      route('revokeApiKey', {
        description: 'Revokes the key: it answers 401 from then on (within 5 seconds on every process). Idempotent.',
        params: ApiKeyParams,
        response: { 204: EmptyBody, 404: problemDoc('no such key in this workspace') },
      }),
      async (request, reply) => {
        const principal = principalOf(request);
        await revokeApiKey(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

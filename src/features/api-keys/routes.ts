import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { EmptyBody, problemDoc } from '../../http/schemas.js';
import { ApiKeyInput, ApiKeyList, ApiKeyListQuery, ApiKeyParams, ApiKeyWithSecretSchema } from './schemas.js';
import { createApiKey, revokeApiKey } from './service.js';
import { listApiKeys } from './store.js';

export function apiKeyRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v1/api-keys',
      {
        config: { auth: 'server' },
        schema: { operationId: 'listApiKeys', tags: ['api-keys'], querystring: ApiKeyListQuery, response: { 200: ApiKeyList } },
      },
      async (request) =>
        listApiKeys(ctx.db, principalOf(request).workspaceId, request.query, (id) => ctx.authenticator.pendingUsage(id)),
    );

    app.post(
      '/v1/api-keys',
      {
        config: { auth: 'server' },
        schema: { operationId: 'createApiKey', tags: ['api-keys'], body: ApiKeyInput, response: { 201: ApiKeyWithSecretSchema } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        return reply.code(201).send(await createApiKey(ctx, principal.workspaceId, principal.keyId, request.body));
      },
    );

    app.delete(
      '/v1/api-keys/:id',
      {
        config: { auth: 'server' },
        schema: {
          operationId: 'revokeApiKey',
          tags: ['api-keys'],
          description: 'Revokes the key: it answers 401 from then on (within 5 seconds on every process). Idempotent.',
          params: ApiKeyParams,
          response: { 204: EmptyBody, 404: problemDoc('no such key in this workspace') },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        await revokeApiKey(ctx, principal.workspaceId, principal.keyId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
